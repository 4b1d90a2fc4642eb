// kvgate template render: what a model is sent. Renders a chat template (a
// file, or a GGUF's tokenizer.chat_template) over one conversation with
// kvgate's Jinja interpreter, and prints the text exactly, with nothing
// added; a template that refuses the conversation (raise_exception, an
// undefined name, ...) exits 1 with the template's message.
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <memory>
#include <sstream>

#include <boost/json.hpp>

#include "base/error.h"
#include "base/file_text.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cli/commands.h"
#include "gateway/template/chat_context.h"
#include "gateway/template/template.h"

namespace kvgate::cli {
namespace {

struct TemplateOptions {
  std::string template_file;
  std::string model;
  std::string input;
  std::string now;
};

// --now "2026-07-26 12:00:00" (or just the date): the time strftime_now sees.
std::tm parse_now(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%d");
  if (in.fail()) throw Error("--now: expected YYYY-MM-DD or \"YYYY-MM-DD HH:MM:SS\", got \"" + text + "\"");
  if (in.peek() == ' ' || in.peek() == 'T') {
    in.get();
    in >> std::get_time(&tm, "%H:%M:%S");
    if (in.fail()) throw Error("--now: expected HH:MM:SS after the date, got \"" + text + "\"");
  }
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);  // fills in the weekday and the day of the year
  std::tm local{};
  localtime_r(&t, &local);
  return local;
}

void render(const TemplateOptions& o) {
  std::string source;
  jinja::ChatContextDefaults defaults;
  if (!o.model.empty()) {
    const auto gguf = GgufFile::open(o.model);
    if (o.template_file.empty()) {
      const std::optional<std::string> t = gguf->optional_string("tokenizer.chat_template");
      if (!t) throw Error(o.model + ": the model has no tokenizer.chat_template; give --template FILE");
      source = *t;
    }
    // The model's own BOS and EOS text, as Hugging Face passes them.
    const auto tokenizer = Tokenizer::from_gguf(*gguf);
    if (tokenizer->bos() >= 0) defaults.bos_token = std::string(tokenizer->piece(tokenizer->bos()));
    if (tokenizer->eos() >= 0) defaults.eos_token = std::string(tokenizer->piece(tokenizer->eos()));
  }
  if (!o.template_file.empty()) source = read_file_text(o.template_file);
  boost::json::value input;
  try {
    input = boost::json::parse(read_file_text(o.input));
  } catch (const boost::system::system_error& e) {
    throw Error(o.input + ": not JSON: " + e.what());
  }
  if (!input.is_object()) throw Error(o.input + ": expected one conversation, a JSON object with \"messages\"");
  const jinja::Value context = jinja::chat_context(input.get_object(), defaults);

  jinja::RenderOptions options;
  if (!o.now.empty()) {
    const std::tm now = parse_now(o.now);
    options.clock = [now] { return now; };
  }
  std::string text;
  try {
    text = jinja::Template::compile(source).render(context, options);
  } catch (const jinja::TemplateError& e) {
    throw Error(std::string("the template refused: ") + e.what());
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void add_template(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("template", "Chat templates as kvgate runs them");
  cmd->require_subcommand(1);
  auto o = std::make_shared<TemplateOptions>();
  CLI::App* r = cmd->add_subcommand("render", "Print the text a chat template renders for one conversation");
  auto* file = r->add_option("--template", o->template_file, "a Jinja chat template file");
  auto* model = r->add_option("--model", o->model,
                              "a GGUF: its tokenizer.chat_template (unless --template is given, as `serve "
                              "--chat-template` does) and its BOS and EOS texts");
  r->add_option("--input", o->input,
                "one conversation as JSON: messages, optional tools, add_generation_prompt, bos_token, eos_token, "
                "extra (more template variables, e.g. enable_thinking)")
      ->required();
  r->add_option("--now", o->now, "the date strftime_now sees, \"YYYY-MM-DD[ HH:MM:SS]\" (default: now)");
  r->callback([o, file, model] {
    if (file->count() == 0 && model->count() == 0) throw Error("template render: give --template FILE or --model GGUF");
    render(*o);
  });
}

}  // namespace kvgate::cli
