// libFuzzer target: arbitrary bytes as a chat template (gateway/template/),
// rendered over a small conversation with tools. A template is code from a
// model file: compiling must succeed or throw TemplateError, rendering must
// return text or throw TemplateError (a refusal, a Python-level error or a
// limit), never crash, hang or throw anything else; and a render is
// deterministic. Bytes after a NUL are the conversation instead, as JSON,
// so the mutator reaches the values too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "gateway/template/chat_context.h"
#include "gateway/template/template.h"

namespace {

constexpr std::string_view kConversation = R"({"messages": [
  {"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Weather in <|im_start|>Paris? café"},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2, "metric": true}}}]},
  {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}],
 "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
 "extra": {"enable_thinking": false, "n": 3, "x": 1.5, "nothing": null}})";

std::tm fuzz_now() {
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  return tm;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  const std::string_view source = bytes.substr(0, nul);
  std::string_view conversation = kConversation;
  if (nul != std::string_view::npos) conversation = bytes.substr(nul + 1);

  kvgate::jinja::Value context;
  try {
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(conversation, ec);
    if (ec || !v.is_object()) return 0;
    context = kvgate::jinja::chat_context(v.get_object());
  } catch (const kvgate::Error&) {
    return 0;  // not a conversation: the input's problem, not the template's
  }

  kvgate::jinja::RenderOptions options;
  options.limits.max_steps = 20'000;
  options.limits.max_output_bytes = 64 << 10;
  options.clock = fuzz_now;
  try {
    const kvgate::jinja::Template t = kvgate::jinja::Template::compile(source);
    std::string first;
    try {
      first = t.render(context, options);
    } catch (const kvgate::jinja::TemplateError&) {
      return 0;
    }
    // Not caught: a second render that differs or throws is a bug.
    if (t.render(context, options) != first) std::abort();
  } catch (const kvgate::jinja::TemplateError&) {
  }
  return 0;
}
