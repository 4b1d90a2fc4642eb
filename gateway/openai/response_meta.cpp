// Response ids and finish reasons. Pure; any thread.
#include "gateway/openai/response_meta.h"

namespace kvgate::openai {

std::string chat_completion_id(std::string_view unique) { return "chatcmpl-" + std::string(unique); }
std::string text_completion_id(std::string_view unique) { return "cmpl-" + std::string(unique); }

std::string_view finish_reason_text(FinishReason r) { return finish_reason_name(r); }

}  // namespace kvgate::openai
