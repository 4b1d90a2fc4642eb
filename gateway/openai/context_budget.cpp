// The generation budget inside the context. Pure; any thread.
#include "gateway/openai/context_budget.h"

#include "gateway/openai/api_error.h"

namespace kvgate::openai {

int32_t completion_budget(std::optional<int32_t> max_tokens, int64_t prompt_tokens, int64_t context_tokens,
                          Endpoint endpoint) {
  const std::string param = endpoint == Endpoint::kChatCompletions ? "messages" : "prompt";
  const int64_t room = context_tokens - prompt_tokens;
  // Asked for, or the one token any completion needs.
  const int64_t wanted = max_tokens.value_or(1);
  if (room < wanted) throw context_length_exceeded(context_tokens, prompt_tokens, wanted, param);
  if (max_tokens) return *max_tokens;
  return room > INT32_MAX ? INT32_MAX : static_cast<int32_t>(room);
}

}  // namespace kvgate::openai
