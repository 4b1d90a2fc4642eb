#include "gateway/template/chat_context.h"

#include "base/error.h"
#include "gateway/template/json_value.h"

namespace kvgate::jinja {

Value chat_context(const boost::json::object& conversation, const ChatContextDefaults& defaults) {
  auto vars = std::make_shared<DictData>();
  const boost::json::value* messages = conversation.if_contains("messages");
  if (!messages || !messages->is_array()) throw Error("the conversation needs \"messages\", an array");
  vars->set("messages", from_json(*messages));
  if (const boost::json::value* tools = conversation.if_contains("tools"); tools && !tools->is_null()) {
    if (!tools->is_array()) throw Error("\"tools\" must be an array");
    vars->set("tools", from_json(*tools));
  }
  bool add_generation_prompt = true;
  if (const boost::json::value* agp = conversation.if_contains("add_generation_prompt")) {
    if (!agp->is_bool()) throw Error("\"add_generation_prompt\" must be a boolean");
    add_generation_prompt = agp->get_bool();
  }
  vars->set("add_generation_prompt", Value(add_generation_prompt));
  auto token = [&](const char* key, const std::string& fallback) {
    const boost::json::value* v = conversation.if_contains(key);
    if (!v) return Value(fallback);
    if (!v->is_string()) throw Error(std::string("\"") + key + "\" must be a string");
    return Value(std::string_view(v->get_string()));
  };
  vars->set("bos_token", token("bos_token", defaults.bos_token));
  vars->set("eos_token", token("eos_token", defaults.eos_token));
  if (const boost::json::value* extra = conversation.if_contains("extra")) {
    if (!extra->is_object()) throw Error("\"extra\" must be an object");
    for (const auto& kv : extra->get_object()) vars->set(std::string(kv.key()), from_json(kv.value()));
  }
  return Value(DictPtr(std::move(vars)));
}

}  // namespace kvgate::jinja
