// What every response object of one request repeats: its id, its creation
// time and the model that answered. Ids are "chatcmpl-<unique>" and
// "cmpl-<unique>", as OpenAI's; the caller supplies the unique part (a
// random string), so building responses stays pure and testable.
//
// Pure values; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/finish_reason.h"

namespace kvgate::openai {

struct ResponseMeta {
  std::string id;
  int64_t created = 0;  // unix seconds, injected by the caller
  std::string model;
};

std::string chat_completion_id(std::string_view unique);  // "chatcmpl-" + unique
std::string text_completion_id(std::string_view unique);  // "cmpl-" + unique

// "stop" and "length", as OpenAI; a cancelled or failed request, which a
// server normally answers with an error instead, is "cancelled" / "error".
std::string_view finish_reason_text(FinishReason r);

}  // namespace kvgate::openai
