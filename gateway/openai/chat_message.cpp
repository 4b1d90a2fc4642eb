// Chat roles by name. Pure; any thread.
#include "gateway/openai/chat_message.h"

namespace kvgate::openai {

std::string_view chat_role_name(ChatRole r) {
  switch (r) {
    case ChatRole::kSystem: return "system";
    case ChatRole::kUser: return "user";
    case ChatRole::kAssistant: return "assistant";
    case ChatRole::kTool: return "tool";
  }
  return "user";
}

}  // namespace kvgate::openai
