// POST /v1/completions: the body as a typed, validated request.
//
// Accepted: model (required string), prompt (required: a string, an array
// of one string, an array of token ids, or an array of one array of token
// ids), the shared generation fields (generation_options.h), and echo,
// logprobs, suffix and best_of only at their defaults (false, null, null
// or "", 1): kvgate cannot honour other values, so it says so rather than
// ignore them. Unknown fields are ignored, as OpenAI does.
//
// Token ids are checked to be in [0, 2^31); whether they are in the
// model's vocabulary is the caller's check (check_prompt_tokens).
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "cache/ids.h"
#include "gateway/openai/generation_options.h"

namespace kvgate::openai {

// Text to tokenize, or token ids to take as they are.
using CompletionPrompt = std::variant<std::string, Tokens>;

struct CompletionRequest {
  std::string model;
  CompletionPrompt prompt;
  GenerationOptions options;
};

// Throws ApiError (400, naming the field) for anything not accepted above;
// several prompts in one request are "only one prompt per request".
CompletionRequest parse_completion_request(std::string_view body);

// Throws ApiError 400 (param "prompt[i]") for an id outside [0, n_vocab).
void check_prompt_tokens(const Tokens& ids, int32_t n_vocab);

}  // namespace kvgate::openai
