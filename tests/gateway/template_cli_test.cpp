// `kvgate template render` as an operator runs it, over every reference
// pair of ../shared/templates: each rendered pair printed exactly (stdout,
// nothing added), each refused pair exit 1 with the template's message.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "tests/gateway/template/reference_templates.h"
#include "tests/temp_dir.h"

namespace kvgate {
namespace {

using kvgate::testing::reference_conversation;
using kvgate::testing::reference_pairs;
using kvgate::testing::templates_dir;

struct TemplateRun {
  int exit_code;
  std::string out;  // stdout only, or stderr only
};

TemplateRun run_template_render(const std::string& args, bool want_stderr) {
  const std::string cmd =
      std::string(KVGATE_BINARY) + " template render " + args + (want_stderr ? " 2>&1 >/dev/null" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// 322 processes: run a few at a time (each mostly starts up), then check
// every result on this thread.
// Under a sanitizer every 8th pair only: each run is mostly the
// instrumented binary starting up (53 s for the 322 under ASan, 10 s in
// Release), and ReferenceRenders.EveryPairAsJinja2 renders every pair in
// process there. The Release run checks all 322.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kPairStride = 8;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kPairStride = 8;
#else
constexpr size_t kPairStride = 1;
#endif
#else
constexpr size_t kPairStride = 1;
#endif

TEST(TemplateCli, RendersEveryReferencePairAsJinja2) {
  kvgate::testing::TempDir dir;
  std::map<std::string, std::string> inputs;  // conversation name -> its file
  std::vector<kvgate::testing::ReferencePair> pairs;
  size_t seen = 0;
  for (auto& pair : reference_pairs()) {
    if (pair.status == "unparsable") continue;
    if (seen++ % kPairStride != 0) continue;
    auto [it, fresh] = inputs.emplace(pair.conversation, dir.sub(pair.conversation + ".json"));
    if (fresh) std::ofstream(it->second) << boost::json::serialize(reference_conversation(pair.conversation));
    pairs.push_back(std::move(pair));
  }
  std::vector<TemplateRun> runs(pairs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < pairs.size();) {
      const auto& pair = pairs[i];
      const std::string args = "--template '" + templates_dir() + "/jinja/" + pair.template_file + "' --input " +
                               inputs.at(pair.conversation) + " --now '2026-07-26 12:00:00'";
      runs[i] = run_template_render(args, pair.status != "rendered");
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::clamp(std::thread::hardware_concurrency(), 2u, 8u); ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  int rendered = 0, refused = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& pair = pairs[i];
    const TemplateRun& r = runs[i];
    SCOPED_TRACE(pair.template_file + " / " + pair.conversation);
    if (pair.status == "rendered") {
      EXPECT_EQ(r.exit_code, 0);
      EXPECT_EQ(r.out, pair.expected);
      rendered += r.exit_code == 0 && r.out == pair.expected;
    } else {
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_EQ(r.out, "kvgate: error: the template refused: " + pair.expected + "\n");
      refused += r.exit_code == 1 && r.out == "kvgate: error: the template refused: " + pair.expected + "\n";
    }
  }
  if (kPairStride == 1) {
    EXPECT_EQ(rendered, 292);
    EXPECT_EQ(refused, 30);
  } else {
    EXPECT_EQ(rendered + refused, static_cast<int>(pairs.size()));
    EXPECT_GT(refused, 0) << "the sample holds refused pairs too";
  }
}

TEST(TemplateCli, NeedsATemplateAndAConversation) {
  kvgate::testing::TempDir dir;
  const std::string input = dir.sub("c.json");
  std::ofstream(input) << R"({"messages": [{"role": "user", "content": "hi"}], "extra": {"who": "you"}})";
  const std::string tmpl = dir.sub("t.jinja");
  std::ofstream(tmpl) << "{% for m in messages %}{{ m.content }} {{ who }}{% endfor %}{{ bos_token }}";
  TemplateRun r = run_template_render("--template " + tmpl + " --input " + input, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hi you<s>");
  r = run_template_render("--input " + input, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("give --template FILE or --model GGUF"), std::string::npos) << r.out;
  std::ofstream(input) << "[]";
  r = run_template_render("--template " + tmpl + " --input " + input, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("expected one conversation"), std::string::npos) << r.out;
}

// --model reads the GGUF's tokenizer.chat_template, with its BOS and EOS text.
TEST(TemplateCli, RendersAModelsOwnTemplate) {
  kvgate::testing::TempDir dir;
  const std::string input = dir.sub("c.json");
  std::ofstream(input) << R"({"messages": [{"role": "user", "content": "<|im_start|>hi"}]})";
  auto src = GgufFile::open(kvgate::testing::shared_path("models/stories260K.gguf"));
  GgufWriter w;
  for (const auto& [k, v] : src->metadata()) w.set(k, v);
  const std::string bare = dir.sub("bare.gguf");
  w.write(bare);
  TemplateRun r = run_template_render("--model " + bare + " --input " + input, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("has no tokenizer.chat_template"), std::string::npos) << r.out;

  w.set_string("tokenizer.chat_template",
               "{{ bos_token }}[{% for m in messages %}{{ m.content }}{% endfor %}]{{ eos_token }}");
  const std::string with_template = dir.sub("templated.gguf");
  w.write(with_template);
  r = run_template_render("--model " + with_template + " --input " + input, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "<s>[<|im_start|>hi]</s>");
}

}  // namespace
}  // namespace kvgate
