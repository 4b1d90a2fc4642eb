// The variables Hugging Face's apply_chat_template passes a chat template,
// from one conversation written as JSON (an entry of
// ../shared/templates/conversations.json, or what `kvgate template render
// --input` reads): `messages`, `tools` when given, `add_generation_prompt`
// (true unless the conversation says false), `bos_token`, `eos_token`, and
// every key of `extra` as a variable of its own (enable_thinking, ...).
#pragma once

#include <string>

#include <boost/json/object.hpp>

#include "gateway/template/value.h"

namespace kvgate::jinja {

struct ChatContextDefaults {
  std::string bos_token = "<s>";
  std::string eos_token = "</s>";
};

// Throws kvgate::Error when `messages` is missing or a field has the wrong type.
Value chat_context(const boost::json::object& conversation, const ChatContextDefaults& defaults = {});

}  // namespace kvgate::jinja
