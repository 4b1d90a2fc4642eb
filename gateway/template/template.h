// A chat template compiled once and rendered many times, the way Hugging
// Face's apply_chat_template runs `tokenizer.chat_template`: Jinja2's
// ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the
// loopcontrols extension, a tojson that keeps non-ASCII, raise_exception
// and strftime_now. Checked byte for byte against Jinja2's own renders of
// real models' templates (tests/gateway/template/).
//
// The sandbox: a template reads only its context; it has no I/O, no way to
// change the context's lists and dicts, and bounded time, memory and
// nesting (Limits). Every failure is a TemplateError carrying Jinja2's
// message (for raise_exception, the template's own words).
//
// Immutable after compile(); render() may run on any number of threads at
// once.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gateway/template/limits.h"
#include "gateway/template/renderer.h"
#include "gateway/template/template_error.h"
#include "gateway/template/value.h"

namespace kvgate::jinja {

struct RenderOptions {
  Limits limits;
  // The time strftime_now() sees; null: the local time now.
  Clock clock;
};

class Template {
 public:
  // Throws TemplateError (kSyntax).
  static Template compile(std::string_view source);

  // `context` is a dict of the template's variables (messages, tools,
  // add_generation_prompt, bos_token, ...). Throws TemplateError.
  std::string render(const Value& context, const RenderOptions& options = {}) const;

 private:
  explicit Template(std::shared_ptr<const Body> body) : body_(std::move(body)) {}
  std::shared_ptr<const Body> body_;
};

}  // namespace kvgate::jinja
