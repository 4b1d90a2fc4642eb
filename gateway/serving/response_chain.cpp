// A chain of stored responses back into chat messages.
#include "gateway/serving/response_chain.h"

#include <algorithm>
#include <utility>

#include <boost/json.hpp>

#include "engine/text/text_stream.h"
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

std::string encode_output_tokens(const Tokens& ids) {
  std::string out;
  out.reserve(ids.size() * 4);
  for (const TokenId id : ids)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(static_cast<uint32_t>(id) >> (8 * i)));
  return out;
}

std::optional<Tokens> decode_output_tokens(std::string_view stored) {
  if (stored.size() % 4 != 0) return std::nullopt;
  Tokens ids(stored.size() / 4);
  for (size_t t = 0; t < ids.size(); ++t) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(stored[4 * t + static_cast<size_t>(i)])) << (8 * i);
    ids[t] = static_cast<TokenId>(v);
  }
  return ids;
}

std::vector<ChainTurn> rebuild_chain(const tenancy::ResponseStore& store, std::string_view tenant,
                                     const std::string& previous_id) {
  std::vector<ChainTurn> turns;  // newest first, until reversed
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
    ChainTurn t{decode_turn(r->input), std::move(r->output_text), std::nullopt};
    if (!r->output_tokens.empty()) t.answer_ids = decode_output_tokens(r->output_tokens);
    turns.push_back(std::move(t));
    id = std::move(r->previous_id);
  }
  std::reverse(turns.begin(), turns.end());
  return turns;
}

namespace {

// What a Responses turn's stream made of `ids`: the prompt before them has
// text, so a first piece's leading space is real.
std::string streamed_text(const Tokenizer& tokenizer, const Tokens& ids) {
  TextStream stream(tokenizer, {}, /*continuation=*/true);
  std::string text;
  for (const TokenId id : ids) text += stream.push(id);
  return text + stream.finish(FinishReason::kStop);
}

}  // namespace

// Where the render after a turn begins with the last prompt's render, then
// the answer as the template was given it, the ids go on with the rest of
// the render alone; otherwise they are the render's, whole. Whitespace a
// template writes between its generation prompt and an answer ("Assistant:"
// then "Assistant: " + content) is left out: the model generated the answer
// right after the prompt, and those are the ids that ran.
Tokens chain_prompt(const openai::ChatTemplate& chat, const openai::PromptEncoder& encoder, const Tokenizer& tokenizer,
                    const std::vector<ChatMessage>& head, const std::vector<ChainTurn>& turns,
                    const std::vector<ChatMessage>& input) {
  std::vector<ChatMessage> conversation = head;
  Tokens ids;
  // What `ids` stand for: the last prompt's render, then its answer (protected
  // as a render has it). Unset: the next step encodes its render whole.
  std::optional<std::pair<std::string, std::string>> said;
  const auto rest_after_said = [&](std::string_view rendered) -> std::optional<std::string_view> {
    if (!said || !rendered.starts_with(said->first)) return std::nullopt;
    std::string_view rest = rendered.substr(said->first.size());
    for (;;) {
      if (rest.starts_with(said->second)) return rest.substr(said->second.size());
      if (rest.empty() || (rest.front() != ' ' && rest.front() != '\n')) return std::nullopt;
      rest.remove_prefix(1);
    }
  };
  const auto step = [&](const std::vector<ChatMessage>& turn_input) {
    conversation.insert(conversation.end(), turn_input.begin(), turn_input.end());
    std::string rendered = chat.render(openai::ChatInput{conversation, true, nullptr, nullptr}, encoder);
    if (const std::optional<std::string_view> rest = rest_after_said(rendered)) {
      const Tokens more = encoder.encode_tail(*rest);
      ids.insert(ids.end(), more.begin(), more.end());
    } else {
      ids = encoder.encode(rendered);
    }
    return rendered;
  };
  for (const ChainTurn& t : turns) {
    std::string rendered = step(t.input);
    conversation.push_back({ChatRole::kAssistant, t.answer, {}, {}});
    // The answer's ids go on only when they are its text, streamed as its
    // client got it: a stop string the client never saw, or a cut
    // character, would make them another.
    if (t.answer_ids && streamed_text(tokenizer, *t.answer_ids) == t.answer) {
      ids.insert(ids.end(), t.answer_ids->begin(), t.answer_ids->end());
      said.emplace(std::move(rendered), encoder.protect(t.answer));
    } else {
      said.reset();
    }
  }
  step(input);
  return ids;
}

}  // namespace kvgate::serving
