// A chain of stored responses back into chat messages.
#include "gateway/serving/response_chain.h"

#include <algorithm>

#include <boost/json.hpp>

#include "gateway/openai/api_error.h"
#include "tenancy/error.h"

namespace kvgate::serving {
namespace json = boost::json;
using openai::ChatMessage;
using openai::ChatRole;

std::string encode_turn(const std::vector<ChatMessage>& input) {
  json::array a;
  a.reserve(input.size());
  for (const ChatMessage& m : input) a.push_back(json::object{{"role", openai::chat_role_name(m.role)}, {"content", m.content}});
  return json::serialize(a);
}

std::vector<ChatMessage> decode_turn(std::string_view stored) {
  auto corrupt = [] { return tenancy::Error(tenancy::ErrorCode::kCorrupt, "a stored response's input"); };
  boost::system::error_code ec;
  const json::value v = json::parse(stored, ec);
  if (ec || !v.is_array()) throw corrupt();
  std::vector<ChatMessage> out;
  for (const json::value& item : v.get_array()) {
    const json::object* o = item.if_object();
    const json::string* role = o && o->if_contains("role") ? o->at("role").if_string() : nullptr;
    const json::string* content = o && o->if_contains("content") ? o->at("content").if_string() : nullptr;
    if (!role || !content) throw corrupt();
    ChatMessage m;
    if (*role == "system") m.role = ChatRole::kSystem;
    else if (*role == "user") m.role = ChatRole::kUser;
    else if (*role == "assistant") m.role = ChatRole::kAssistant;
    else throw corrupt();
    m.content = std::string(*content);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<ChatMessage> rebuild_conversation(const tenancy::ResponseStore& store, std::string_view tenant,
                                              const std::string& previous_id) {
  std::vector<std::vector<ChatMessage>> turns;  // newest first
  std::string id = previous_id;
  while (!id.empty()) {
    if (turns.size() == kMaxChainTurns)
      throw openai::invalid_value("previous_response_id", "the conversation is longer than " +
                                                              std::to_string(kMaxChainTurns) + " responses.");
    std::optional<tenancy::StoredResponse> r = store.get(tenant, id);
    if (!r) {
      openai::ApiError e = openai::not_found("Previous response with id '" + id + "' not found.");
      e.param = "previous_response_id";
      throw e;
    }
    std::vector<ChatMessage> turn = decode_turn(r->input);
    turn.push_back({ChatRole::kAssistant, std::move(r->output_text), {}, {}});
    turns.push_back(std::move(turn));
    id = std::move(r->previous_id);
  }
  std::vector<ChatMessage> out;
  for (auto it = turns.rbegin(); it != turns.rend(); ++it)
    std::move(it->begin(), it->end(), std::back_inserter(out));
  return out;
}

}  // namespace kvgate::serving
