// Anthropic's cache_control breakpoints as the engine's pins: where in the
// prompt's tokens each marked block ends.
//
// A breakpoint marks a block of the request; the prompt is what the chat
// template renders from the whole request, so the block's end has no
// position of its own in it. Its position is defined as the longest prefix
// of the prompt that does not depend on anything after the block: the
// conversation is rendered again, cut right after the block (no generation
// prompt), and the breakpoint lies where that render and the prompt's part
// ways (a template that writes the turn's end after the block puts it
// inside the prefix, as the next request's prompt has it too); that text,
// encoded, shares a run of leading tokens with the prompt, and the run's
// length is the position. So the position depends only on what comes
// before the block, and the next request with the same beginning finds
// the same pinned blocks, whatever follows.
//
// A breakpoint whose prefix is shorter than `min_tokens` (Anthropic's
// minimum cacheable length, 1024 by default) is dropped, as is one the
// template refuses to render cut (a template that insists on a user turn
// last): neither is written or billed as a write. Only full KV blocks are
// cached, so the engine pins the prefix's full blocks (engine/request.h).
//
// Pure; any thread (the template and encoder are immutable).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "gateway/anthropic/messages_request.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/prompt_encoder.h"

namespace kvgate::serving {

// `rendered` and `prompt`: the whole request's render (with its generation
// prompt) and its tokens. One span per breakpoint kept, in its order.
std::vector<PinSpan> breakpoint_pins(const anthropic::MessagesRequest& request, const openai::ChatTemplate& chat,
                                     const openai::PromptEncoder& encoder, std::string_view rendered,
                                     const Tokens& prompt, int32_t min_tokens);

}  // namespace kvgate::serving
