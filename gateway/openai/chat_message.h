// One message of a chat conversation, as the chat template renders it.
//
// OpenAI's "developer" role is its newer name for "system" (o1 and later),
// so it is read as kSystem: every template knows a system turn, none knows
// a developer turn. Content is text: a string, or the text parts of a
// content array joined with "\n" (as vLLM joins them). An assistant message
// may carry the tool calls it made (its content then often empty); a tool
// message carries one call's result and the id of that call.
//
// Pure values; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvgate::openai {

enum class ChatRole { kSystem, kUser, kAssistant, kTool };

// "system", "user", "assistant", "tool": the names templates write.
std::string_view chat_role_name(ChatRole r);

// One function call a model made: OpenAI's {"id", "type": "function",
// "function": {"name", "arguments"}}, the arguments as the JSON text of an
// object (a string on the wire, as OpenAI sends it).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
  bool operator==(const ToolCall&) const = default;
};

struct ChatMessage {
  ChatRole role = ChatRole::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;  // kAssistant
  std::string tool_call_id;          // kTool: the call it answers
  bool operator==(const ChatMessage&) const = default;
};

}  // namespace kvgate::openai
