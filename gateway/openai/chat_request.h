// POST /v1/chat/completions: the body as a typed, validated request.
//
// Accepted: model (required string), messages (required, non-empty array of
// {role, content}; an assistant's tool_calls, a tool message's
// tool_call_id, which must name an earlier call), the tools offered
// (chat_tools.h), response_format (structured_output.h), the shared
// generation fields (generation_options.h), vLLM's chat_template_kwargs (an
// object of template variables) and add_generation_prompt (default true),
// and logprobs only as false / top_logprobs only as null, since kvgate
// returns no log probabilities. Fields that would change the answer and
// that kvgate does not honour yet are refused by name rather than ignored:
// functions and function_call (tools' predecessors), logit_bias, a
// request's own chat_template, continue_final_message, and what
// chat_tools.h and structured_output.h refuse. Other unknown fields are ignored, as OpenAI does.
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/openai/chat_message.h"
#include "gateway/openai/chat_tools.h"
#include "gateway/openai/generation_options.h"
#include "gateway/openai/structured_output.h"

namespace kvgate::openai {

struct ChatCompletionRequest {
  std::string model;
  std::vector<ChatMessage> messages;  // at least one
  GenerationOptions options;
  bool add_generation_prompt = true;
  std::optional<boost::json::object> template_kwargs;  // chat_template_kwargs
  std::optional<ChatTools> tools;                      // none: the request offers no tools
  ResponseFormat response_format;
};

// Throws ApiError (400, naming the field) for anything not accepted above;
// see json_body.h for the errors of a body that is not a JSON object.
ChatCompletionRequest parse_chat_completion_request(std::string_view body);

}  // namespace kvgate::openai
