// One message of a chat conversation, as the chat template renders it.
//
// OpenAI's "developer" role is its newer name for "system" (o1 and later),
// so it is read as kSystem: every template family knows a system turn, none
// knows a developer turn. Content is text: a string, or the text parts of a
// content array joined with "\n" (as vLLM joins them).
//
// Pure values; any thread.
#pragma once

#include <string>
#include <string_view>

namespace kvgate::openai {

enum class ChatRole { kSystem, kUser, kAssistant };

// "system", "user", "assistant": the names templates write.
std::string_view chat_role_name(ChatRole r);

struct ChatMessage {
  ChatRole role = ChatRole::kUser;
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

}  // namespace kvgate::openai
