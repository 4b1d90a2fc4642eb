// kvgate_bench_template: what rendering a model's chat template costs next
// to tokenizing the text it renders (issue 34: rendering must cost little
// beside tokenization). Real templates from ../shared/templates over two of
// its conversations (a plain chat, and tools with a call and its result),
// each compiled once as the server does and rendered many times; the text is
// then tokenized with GPT-2's byte-level BPE vocabulary (its word cache
// warm, as for a repeated prompt: the cheapest tokenization, so the ratio is
// the least flattering to rendering). Then the server's whole path (mark,
// render, encode) against tokenizing the render whole. Medians of batches.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/prompt_encoder.h"
#include "gateway/template/chat_context.h"
#include "gateway/template/template.h"
#include "tests/bench/median.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double micros_per_call(F&& f, int calls) {
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    batches.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
  }
  return median(batches);
}

std::tm fixed_now() {
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_hour = 12;
  return tm;
}

}  // namespace
}  // namespace kvgate

int main(int argc, char** argv) {
  using namespace kvgate;
  if (argc > 1) setenv("KVGATE_SHARED", argv[1], 1);
  const std::string dir = testing::shared_path("templates");
  const boost::json::value conversations = boost::json::parse(testing::read_file(dir + "/conversations.json"));
  auto vocab = GgufFile::open(testing::shared_path("testdata/ggml-vocab-gpt-2.gguf"));
  auto tokenizer = Tokenizer::from_gguf(*vocab);

  std::printf(
      "| template | conversation | bytes | tokens | compile µs | render µs | tokenize µs | render / tokenize |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  const char* templates[] = {"Qwen-Qwen2.5-7B-Instruct",  "meta-llama-Llama-3.1-8B-Instruct",
                             "Qwen-Qwen3-0.6B",           "mistralai-Mistral-Nemo-Instruct-2407",
                             "deepseek-ai-DeepSeek-V3.1", "openai-gpt-oss-120b",
                             "google-gemma-4-31B-it"};
  for (const char* name : templates) {
    const std::string source = testing::read_file(dir + "/jinja/" + name + ".jinja");
    const double compile_us = micros_per_call([&] { jinja::Template::compile(source); }, 20);
    const jinja::Template t = jinja::Template::compile(source);
    for (const char* conv : {"chat", "tools"}) {
      boost::json::object c;
      for (const auto& entry : conversations.as_array())
        if (entry.as_object().at("name").as_string() == conv) c = entry.as_object();
      const jinja::Value context = jinja::chat_context(c);
      jinja::RenderOptions options;
      options.clock = fixed_now;
      std::string text;
      try {
        text = t.render(context, options);
      } catch (const jinja::TemplateError& e) {
        std::printf("| %s | %s | refused: %s | | | | | |\n", name, conv, e.what());
        continue;
      }
      const double render_us = micros_per_call([&] { t.render(context, options); }, 200);
      const size_t tokens = tokenizer->encode(text, {.add_bos = false}).size();
      const double warm_us = micros_per_call([&] { tokenizer->encode(text, {.add_bos = false}); }, 200);
      std::printf("| %s | %s | %zu | %zu | %.0f | %.1f | %.1f | %.2f |\n", name, conv, text.size(), tokens, compile_us,
                  render_us, warm_us, render_us / warm_us);
    }
  }

  // The server's whole path for a chat request's prompt: the request's
  // strings marked, the template rendered (openai::ChatTemplate) and the
  // render encoded (openai::PromptEncoder), against tokenizing the same
  // text whole with its control tokens parsed. A short chat, and a long
  // one: a 2,000-word system prompt and 16 turns, an agent's shape.
  std::printf("\n| template | conversation | tokens | mark + render µs | encode µs | tokenize µs | (render + encode) / tokenize |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  const openai::PromptEncoder encoder(*tokenizer);
  std::string long_system;
  for (int i = 0; long_system.size() < 12000; ++i)
    long_system += "Rule " + std::to_string(i) + ": answer the customer's question about their booking politely. ";
  std::vector<openai::ChatMessage> long_chat = {{openai::ChatRole::kSystem, long_system}};
  for (int turn = 0; turn < 8; ++turn) {
    long_chat.push_back({openai::ChatRole::kUser, "Can I move my flight " + std::to_string(turn) + " to Tuesday?"});
    long_chat.push_back({openai::ChatRole::kAssistant, "Yes: flight " + std::to_string(turn) + " moves to Tuesday."});
  }
  long_chat.push_back({openai::ChatRole::kUser, "Thanks, and the hotel?"});
  const std::vector<openai::ChatMessage> short_chat = {
      {openai::ChatRole::kSystem, "You are a concise assistant for a travel company."},
      {openai::ChatRole::kUser, "What is the capital of France?"}};
  for (const char* name : {"Qwen-Qwen2.5-7B-Instruct", "meta-llama-Llama-3.1-8B-Instruct"}) {
    const openai::ChatTemplate t(testing::read_file(dir + "/jinja/" + name + ".jinja"), name, fixed_now);
    const std::pair<const char*, const std::vector<openai::ChatMessage>*> conversations_of_path[] = {
        {"chat", &short_chat}, {"long", &long_chat}};
    for (const auto& [conv, messages] : conversations_of_path) {
      const openai::ChatInput input{*messages};
      const std::string text = t.render(input, encoder);
      const size_t tokens = encoder.encode(text).size();
      const double render_us = micros_per_call([&] { t.render(input, encoder); }, 100);
      const double encode_us = micros_per_call([&] { encoder.encode(text); }, 100);
      const double whole_us =
          micros_per_call([&] { tokenizer->encode(text, {.add_bos = false, .parse_special = true}); }, 100);
      std::printf("| %s | %s | %zu | %.1f | %.1f | %.1f | %.2f |\n", name, conv, tokens, render_us, encode_us, whole_us,
                  (render_us + encode_us) / whole_us);
    }
  }
  return 0;
}
