// The token masker of a model's vocabulary (engine/grammar/token_mask.h):
// each token as the bytes it decodes to, so a grammar judges exactly the
// text the client will see. Control tokens decode to nothing and are never
// allowed; end-of-generation tokens other than EOS are banned too, so a
// constrained output ends only through EOS, once its value is whole.
//
// Built once per model (a trie over the vocabulary: tens of milliseconds
// for 128k tokens) and shared by every constrained request, with a cache of
// up to 64 MiB of masks for states that recur across requests.
#pragma once

#include <memory>

#include "engine/grammar/token_mask.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate {

std::shared_ptr<const grammar::TokenMasker> vocabulary_masker(const Tokenizer& tokenizer);

}  // namespace kvgate
