// POST /v1/chat/completions: the body as a typed, validated request.
//
// Accepted: model (required string), messages (required, non-empty array of
// {role, content}), the shared generation fields (generation_options.h),
// and logprobs only as false / top_logprobs only as null, since kvgate
// returns no log probabilities. Unknown fields are ignored, as OpenAI does.
//
// Pure; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gateway/openai/chat_message.h"
#include "gateway/openai/generation_options.h"

namespace kvgate::openai {

struct ChatCompletionRequest {
  std::string model;
  std::vector<ChatMessage> messages;  // at least one
  GenerationOptions options;
};

// Throws ApiError (400, naming the field) for anything not accepted above;
// see json_body.h for the errors of a body that is not a JSON object.
ChatCompletionRequest parse_chat_completion_request(std::string_view body);

}  // namespace kvgate::openai
