// kvgate_bench_tokenizer: encode and decode throughput per vocabulary, on a
// few MB of generated mixed text (English-like prose, C++-like code, CJK,
// emoji with ZWJ sequences, numbers), cut into prompt-sized pieces the way
// the gateway sees them. Everything is generated here from a fixed seed:
// the same bytes on every machine, nothing downloaded.
//
// Columns: encode with an empty word cache ("cold", the first sight of the
// text: each prompt is encoded by a fresh tokenizer, built outside the timed
// region, since the generated prompts share most of their words and one
// tokenizer's cache would be warm after the first prompt), encode again
// ("warm": every prompt seen before, as on a prefix-cache hit; the ids must
// equal the cold ones), the warm encode on every hardware thread at once,
// and decode. The
// last column compares encoding with what it feeds: the time the CPU engine
// spends prefilling the same number of tokens on the ~110M model, so a cache
// hit's tokenization can be seen to be negligible next to the prefill it saves.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/bench/bench_models.h"
#include "engine/tokenizer/utf8.h"
#include "tests/bench/machine_limits.h"

namespace kvgate {
namespace {

using Clock = std::chrono::steady_clock;

struct Rng {  // xorshift32: deterministic and the same everywhere
  uint32_t x = 2463534242u;
  uint32_t next() { return x ^= x << 13, x ^= x >> 17, x ^= x << 5; }
  size_t below(size_t n) { return next() % n; }
};

std::string prose(Rng& r) {
  static const char* words[] = {"the", "of", "and", "a", "to", "in", "is", "you", "that", "it", "he", "was",
                                "for", "on", "are", "as", "with", "his", "they", "I", "at", "be", "this",
                                "have", "from", "cache", "prefix", "tenant", "gateway", "tokenizer",
                                "beautiful", "quickly", "understanding", "information", "government",
                                "Lily", "London", "don't", "it's", "we'll", "children", "through"};
  std::string s;
  const size_t n = 40 + r.below(80);
  for (size_t i = 0; i < n; ++i) {
    std::string w = words[r.below(std::size(words))];
    if (i == 0 || r.below(12) == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    s += w;
    const size_t p = r.below(20);
    s += p == 0 ? ". " : p == 1 ? ", " : p == 2 ? "; " : " ";
    if (r.below(30) == 0) s += std::to_string(r.below(100000)) + " ";
  }
  return s + "\n\n";
}

std::string code(Rng& r) {
  std::string s = "int compute_" + std::to_string(r.below(1000)) + "(const std::vector<float>& xs) {\n";
  const size_t n = 4 + r.below(12);
  for (size_t i = 0; i < n; ++i) {
    s += std::string(4 + 4 * r.below(3), ' ');
    switch (r.below(4)) {
      case 0: s += "for (size_t i = 0; i < xs.size(); ++i) total += xs[i] * " + std::to_string(r.below(97)) + ";\n"; break;
      case 1: s += "if (total > 1e-6f && !done) { return static_cast<int>(total); }\n"; break;
      case 2: s += "// TODO(kvgate): handle the empty case\n"; break;
      default: s += "auto it = std::find_if(xs.begin(), xs.end(), [](float v) { return v < 0; });\n"; break;
    }
  }
  return s + "}\n\n";
}

std::string cjk(Rng& r) {
  std::string s;
  const size_t n = 30 + r.below(120);
  for (size_t i = 0; i < n; ++i) {
    if (r.below(14) == 0) utf8_append(s, r.below(2) ? 0x3002 : 0xFF0C);  // 。，
    // Mostly the most common block, so the vocabulary has pieces for many.
    utf8_append(s, static_cast<char32_t>(0x4E00 + (r.below(3) ? r.below(0x800) : r.below(0x51A5))));
  }
  return s + "\n";
}

std::string emoji(Rng& r) {
  static const char32_t singles[] = {0x1F600, 0x1F680, 0x2705, 0x1F389, 0x1F44D, 0x2764, 0x1F525, 0x1F914};
  std::string s = "Reactions: ";
  const size_t n = 3 + r.below(10);
  for (size_t i = 0; i < n; ++i) {
    utf8_append(s, singles[r.below(std::size(singles))]);
    if (r.below(4) == 0) {  // a ZWJ sequence: face in clouds
      utf8_append(s, 0x200D);
      utf8_append(s, 0x1F32B);
      utf8_append(s, 0xFE0F);
    }
    s += r.below(3) ? " " : "";
  }
  return s + "\n";
}

// Prompt-sized pieces (about 8 KB each, cut between sections) totalling ~bytes.
std::vector<std::string> make_prompts(size_t bytes) {
  Rng r;
  std::vector<std::string> prompts(1);
  size_t total = 0;
  while (total < bytes) {
    const size_t k = r.below(10);
    const std::string part = k < 5 ? prose(r) : k < 8 ? code(r) : k < 9 ? cjk(r) : emoji(r);
    total += part.size();
    prompts.back() += part;
    if (prompts.back().size() > 8192) prompts.emplace_back();
  }
  if (prompts.back().empty()) prompts.pop_back();
  return prompts;
}

struct Timing {
  double seconds;
  size_t tokens;
};

Timing encode_all(const Tokenizer& t, const std::vector<std::string>& prompts, std::vector<Tokens>* keep) {
  const auto t0 = Clock::now();
  size_t n = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Tokens ids = t.encode(prompts[i], {.add_bos = false});
    n += ids.size();
    if (keep) (*keep)[i] = std::move(ids);
  }
  return {std::chrono::duration<double>(Clock::now() - t0).count(), n};
}

// Cold: each prompt is encoded by its own fresh tokenizer from `file`, so
// every prompt starts with an empty word cache (and each thread's front
// cache, tagged by cache id, misses too). Only the encodes are timed.
Timing encode_cold(const GgufFile& file, const std::vector<std::string>& prompts, std::vector<Tokens>& keep) {
  double seconds = 0;
  size_t n = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto fresh = Tokenizer::from_gguf(file);
    const auto t0 = Clock::now();
    keep[i] = fresh->encode(prompts[i], {.add_bos = false});
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    n += keep[i].size();
  }
  return {seconds, n};
}

Timing encode_parallel(const Tokenizer& t, const std::vector<std::string>& prompts, unsigned threads) {
  std::vector<size_t> counts(threads, 0);
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      for (const std::string& p : prompts) counts[k] += t.encode(p, {.add_bos = false}).size();  // all of it, each thread
    });
  for (auto& th : pool) th.join();
  size_t n = 0;
  for (size_t c : counts) n += c;
  return {std::chrono::duration<double>(Clock::now() - t0).count(), n};
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.1f", v);
  return buf;
}

std::string mtok(double tokens, double seconds) { return fmt(tokens / seconds / 1e6); }

// Seconds per token of a 1024-token prefill on the ~110M f32 model, best of 3.
double prefill_seconds_per_token(const std::string& models_dir, const std::string& shared) {
  auto model = Model::load(bench_model_110m(models_dir, shared, TensorType::F32));
  auto be = make_cpu_backend(model, {});
  std::vector<BlockId> table(static_cast<size_t>(be->num_blocks()));
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<BlockId>(i);
  Tokens prompt(1024);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<TokenId>(3 + (i * 7919) % 31000);
  SequenceStep st{prompt, 0, table, LogitsWanted::kLast};
  Logits out;
  be->forward({&st, 1}, out);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    be->forward({&st, 1}, out);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best / static_cast<double>(prompt.size());
}

}  // namespace
}  // namespace kvgate

int main(int argc, char** argv) {
  using namespace kvgate;
  const auto [root, models_dir] = bench_dirs(argc, argv);
  const std::vector<std::string> prompts = make_prompts(4u << 20);
  size_t bytes = 0;
  for (const auto& p : prompts) bytes += p.size();
  const double mb = static_cast<double>(bytes) / 1e6;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  std::printf("# Tokenizer throughput\n\n%s\n\n", machine_summary().c_str());
  std::printf("Text: %.2f MB generated (prose 50%%, code 30%%, CJK 10%%, emoji 10%% of sections), "
              "%zu prompts of ~8 KB. MB = 1e6 bytes of UTF-8 input; Mtok/s = million tokens per second.\n\n",
              mb, prompts.size());
  const double prefill_s = prefill_seconds_per_token(models_dir, root);
  std::printf("Prefill on the ~110M f32 model (1024 tokens, CPU backend): %.1f us/token. The last column is "
              "cold encode time per token as a share of that.\n\n",
              prefill_s * 1e6);
  std::printf("| vocabulary | kind | tokens | bytes/token | encode cold MB/s | encode warm MB/s | "
              "encode warm Mtok/s | encode %u threads MB/s | decode MB/s | decode Mtok/s | encode / prefill |\n",
              threads);
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");

  for (const char* name : {"ggml-vocab-gpt-2", "ggml-vocab-llama-spm", "ggml-vocab-deepseek-llm",
                           "ggml-vocab-falcon", "ggml-vocab-mpt", "ggml-vocab-starcoder"}) {
    auto file = GgufFile::open(root + "/testdata/" + name + ".gguf");
    std::vector<Tokens> ids(prompts.size());
    const Timing cold = encode_cold(*file, prompts, ids);
    auto tok = Tokenizer::from_gguf(*file);
    Timing warm{1e30, 0};
    std::vector<Tokens> again(prompts.size());
    (void)encode_all(*tok, prompts, &again);  // the first sight for this tokenizer: fills its cache
    if (again != ids) {
      std::fprintf(stderr, "%s: encoding with a warm word cache gave other ids than with an empty one\n", name);
      return 1;
    }
    for (int rep = 0; rep < 3; ++rep) {
      const Timing t = encode_all(*tok, prompts, nullptr);
      if (t.seconds < warm.seconds) warm = t;
    }
    const Timing par = encode_parallel(*tok, prompts, threads);

    double dec_s = 1e30;
    size_t dec_bytes = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = Clock::now();
      size_t nb = 0;
      for (const Tokens& t : ids) nb += tok->decode(t).size();
      dec_s = std::min(dec_s, std::chrono::duration<double>(Clock::now() - t0).count());
      dec_bytes = nb;
    }
    if (dec_bytes != bytes) {  // the round trip is byte-exact for this text
      std::fprintf(stderr, "%s: decode gave %zu bytes, expected %zu\n", name, dec_bytes, bytes);
      return 1;
    }

    const double ntok = static_cast<double>(cold.tokens);
    const double share = cold.seconds / ntok / prefill_s;
    std::printf("| %s | %s | %zu | %.2f | %s | %s | %s | %s | %s | %s | %.4f%% |\n", name + 11,
                tok->vocab().kind() == VocabKind::Spm ? "SPM" : ("BPE/" + tok->vocab().pre()).c_str(),
                cold.tokens, static_cast<double>(bytes) / ntok, fmt(mb / cold.seconds).c_str(),
                fmt(mb / warm.seconds).c_str(), mtok(ntok, warm.seconds).c_str(),
                fmt(mb * threads / par.seconds).c_str(), fmt(mb / dec_s).c_str(), mtok(ntok, dec_s).c_str(),
                100.0 * share);
    std::fflush(stdout);
  }
  return 0;
}
