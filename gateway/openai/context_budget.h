// How many tokens a request may generate in the model's context, or the
// 400 OpenAI answers when it asks for more than fits.
//
// The context holds the prompt and every generated token. A request that
// names max_tokens gets exactly that many at most, or a 400 when prompt +
// max_tokens exceeds the context (never silently clamped); one that names
// none gets what the context leaves. A prompt that leaves no room for even
// one token is a 400 either way. The engine's Request takes the result as
// its max_tokens.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>

#include "gateway/openai/generation_options.h"

namespace kvgate::openai {

// Throws ApiError 400 context_length_exceeded, param "messages" (chat) or
// "prompt" (completions).
int32_t completion_budget(std::optional<int32_t> max_tokens, int64_t prompt_tokens, int64_t context_tokens,
                          Endpoint endpoint);

}  // namespace kvgate::openai
