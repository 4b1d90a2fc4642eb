// The token masker of a model's vocabulary (engine/grammar/token_mask.h):
// each token as the bytes it decodes to, so a grammar judges exactly the
// text the client will see. Control tokens decode to nothing and are never
// allowed; end-of-generation tokens other than EOS are banned too, so a
// constrained output ends only through EOS, once its value is whole.
//
// `markers`: control tokens whose text is one of these are allowed where a
// grammar writes marker_bytes(text). A format's call markers ([TOOL_CALLS],
// <｜tool▁sep｜>, ...) are control tokens that a request with tools sees
// decoded as their text (serving's ToolMarkerTokens); a grammar that forces
// such a call writes each marker as the token, the only way a real model
// writes it. Not as its text: that could come inside a JSON string of the
// arguments too, where the marker would end the call for the parser, and
// it could be spelled with ordinary tokens, which a model never chooses.
// marker_bytes holds 0xFF, which no UTF-8 text holds, so no other part of
// a grammar accepts it; tokens that hold 0xFF (byte tokens) are banned in
// such a masker, so none but the marker's own token spells it.
//
// Built once per model (a trie over the vocabulary: tens of milliseconds
// for 128k tokens) and shared by every constrained request, with a cache of
// up to 64 MiB of masks for states that recur across requests. Its vocab
// size is the model's.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/grammar/token_mask.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate {

// Masks kept for states that recur (token_mask.h): 64 MiB is about 10,000
// masks of a 50k vocabulary, 4,000 of a 128k one.
inline constexpr size_t kMaskCacheBytes = size_t{64} << 20;

std::shared_ptr<const grammar::TokenMasker> vocabulary_masker(const Tokenizer& tokenizer,
                                                              std::span<const std::string_view> markers = {},
                                                              size_t cache_bytes = kMaskCacheBytes);

// What a marker token reads as to a masker built with it: 0xFF, its text, 0xFF.
std::string marker_bytes(std::string_view marker);

}  // namespace kvgate
