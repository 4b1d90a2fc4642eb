// kvgate_bench_prefix: what the prefix cache saves, and what it costs.
//
// TTFT of a 2,048-token prompt on the ~110M model (CPU backend, through the
// Scheduler, admission included): cold (nothing cached) and warm (its first
// 1,920 tokens — 120 blocks of 16 — cached by an earlier request that shared
// them and then diverged). Warm prefills the 128-token suffix only,
// attending over all 2,048 positions. The step budget (max_step_tokens =
// 4,096) holds the whole prompt, so chunked prefill does not split it: cold
// and warm are each one forward pass.
//
// Then a prompt sent a second time (the whole prompt cached but its
// partial last block, or its last token).
//
// Then the cache's own cost per prompt token: computing the block hash chain
// (XXH3-128 per block) and looking it up (index probe plus verification of
// parent, depth, scope and every token of each block), next to the cold
// prefill's cost per token.
//
// Every figure is the median of several runs; a fresh prompt suffix per run
// keeps warm runs from hitting the previous run's blocks.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/scheduler.h"
#include "tests/bench/bench_models.h"
#include "tests/bench/bench_prompts.h"
#include "tests/bench/median.h"
#include "tests/bench/machine_limits.h"

namespace kvgate {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kPrompt = 2048, kCachedPrefix = 1920, kBlock = 16, kRuns = 5, kStepTokens = 4096;
static_assert(kCachedPrefix % kBlock == 0, "the shared prefix is whole blocks: all of it can hit");
constexpr cache::ScopeId kScope{0x7e4a47, 1};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A figure is only worth printing if the run did what the table says: a
// failed check aborts the benchmark with a message instead.
void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "prefix bench: %s\n", what.c_str());
  std::exit(1);
}

// Every request's prompt must be accounted as exactly `cached` cached tokens
// and the rest prefilled.
void require_cached(const RequestResult& r, int32_t prompt, int32_t cached, const char* which) {
  require(r.prompt_tokens == prompt && r.cached_tokens == cached && r.fresh_prefill_tokens == prompt - cached,
          std::string(which) + ": expected " + std::to_string(prompt) + " prompt tokens, " + std::to_string(cached) +
              " cached, got " + std::to_string(r.prompt_tokens) + " prompt, " + std::to_string(r.cached_tokens) +
              " cached, " + std::to_string(r.fresh_prefill_tokens) + " prefilled");
}

struct Ttft {
  double seconds;
  RequestResult result;
};

// submit() to the first token out of step(): admission, lookup and prefill.
Ttft time_to_first_token(Scheduler& sched, Tokens prompt) {
  const auto t0 = Clock::now();
  auto stream = sched.submit(first_token_request(std::move(prompt), kScope), {});
  int64_t steps = 0;
  do {
    sched.step();
    ++steps;
  } while (!stream->try_pop());
  const double s = seconds_since(t0);
  require(steps == 1, "the first token took " + std::to_string(steps) + " steps, not one forward pass");
  while (!sched.idle()) sched.step();
  return {s, stream->wait().result};
}

}  // namespace
}  // namespace kvgate

int main(int argc, char** argv) {
  using namespace kvgate;
  const auto [shared, models_dir] = bench_dirs(argc, argv);

  std::printf("# Prefix cache\n\n%s\n\n", machine_summary().c_str());
  const double sgemm = measure_sgemm_peak_gflops(), fma = measure_fma_peak_gflops();
  auto model = Model::load(bench_model_110m(models_dir, shared, TensorType::F32));
  const ModelConfig& c = model->config();
  auto t0 = Clock::now();
  const cache::ModelFingerprint fp = model_fingerprint(*model, KvLayout{KvType::kF32});
  const double fp_s = seconds_since(t0);
  t0 = Clock::now();
  (void)model_fingerprint(*model, KvLayout{KvType::kF32});
  const double fp_warm_s = seconds_since(t0);
  std::printf("Model: ~110M f32 (%d layers, dim %d, %d/%d heads, context %d); OpenBLAS sgemm peak %.1f GFLOP/s, "
              "FMA peak (%s) %.1f GFLOP/s. Model fingerprint (once per load): %.0f ms first, %.0f ms with the file in "
              "the page cache.\n\n",
              c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.context_length, sgemm, fma_peak_width(), fma, fp_s * 1e3,
              fp_warm_s * 1e3);

  // Room for a few 2,048-token requests' blocks; LRU keeps the shared prefix.
  BackendOptions bo;
  bo.block_size = kBlock;
  bo.kv_budget_bytes = kv_budget_for_blocks(c, KvType::kF32, kBlock, 512);
  SchedulerOptions so;
  so.model = fp;
  so.max_step_tokens = kStepTokens;
  Scheduler sched(make_cpu_backend(model, bo), std::move(so));

  const Tokens prefix = bench_prompt(kCachedPrefix, c.vocab_size, 1);
  // Warm-up: page in the weights.
  require_cached(time_to_first_token(sched, bench_prompt(256, c.vocab_size, 2)).result, 256, 0, "warm-up");
  // Seed the cache: a request sharing the 1,920-token prefix, then diverging.
  require_cached(time_to_first_token(sched, concat(prefix, bench_prompt(kPrompt - kCachedPrefix, c.vocab_size, 3))).result,
                 kPrompt, 0, "seeding request");

  std::vector<double> cold, warm;
  RequestResult cold_r, warm_r;
  for (int i = 0; i < kRuns; ++i) {
    Ttft w = time_to_first_token(sched, concat(prefix, bench_prompt(kPrompt - kCachedPrefix, c.vocab_size, 100 + i)));
    Ttft k = time_to_first_token(sched, bench_prompt(kPrompt, c.vocab_size, 200 + i));
    // Warm: exactly the shared prefix's 120 full blocks hit (its fresh
    // suffix shares nothing); cold: nothing.
    require_cached(w.result, kPrompt, kCachedPrefix, ("warm run " + std::to_string(i)).c_str());
    require_cached(k.result, kPrompt, 0, ("cold run " + std::to_string(i)).c_str());
    warm.push_back(w.seconds), warm_r = w.result;
    cold.push_back(k.seconds), cold_r = k.result;
  }
  // A prompt sent again: every full block hits and the rest is prefilled,
  // the partial last block (8 tokens here), or for a prompt of whole
  // blocks its last token alone (prefix-cache.md). Seeded once, then timed.
  struct Repeat {
    const char* name;
    int32_t tokens;
    double seconds;
    RequestResult result;
  };
  Repeat repeats[] = {{"repeat, whole blocks", kPrompt, 0, {}}, {"repeat, partial last block", kPrompt - 8, 0, {}}};
  for (Repeat& r : repeats) {
    const Tokens p = bench_prompt(r.tokens, c.vocab_size, 300 + r.tokens);
    require_cached(time_to_first_token(sched, p).result, r.tokens, 0, "repeat's seed");
    const int32_t cached = r.tokens % kBlock == 0 ? r.tokens - 1 : r.tokens / kBlock * kBlock;
    std::vector<double> times;
    for (int i = 0; i < kRuns; ++i) {
      Ttft t = time_to_first_token(sched, p);
      require_cached(t.result, r.tokens, cached, r.name);
      times.push_back(t.seconds), r.result = t.result;
    }
    r.seconds = median(times);
  }

  const double cold_s = median(cold), warm_s = median(warm);
  std::printf("## TTFT, cold vs warm (median of %d)\n\n", kRuns);
  std::printf("| prompt | tokens | cached | prefilled | TTFT ms | vs cold |\n|---|---:|---:|---:|---:|---:|\n");
  std::printf("| cold | %d | %d | %d | %.1f | 1.000 |\n", cold_r.prompt_tokens, cold_r.cached_tokens,
              cold_r.fresh_prefill_tokens, cold_s * 1e3);
  std::printf("| warm | %d | %d | %d | %.1f | %.3f |\n", warm_r.prompt_tokens, warm_r.cached_tokens,
              warm_r.fresh_prefill_tokens, warm_s * 1e3, warm_s / cold_s);
  for (const Repeat& r : repeats)
    std::printf("| %s | %d | %d | %d | %.1f | %.3f |\n", r.name, r.result.prompt_tokens, r.result.cached_tokens,
                r.result.fresh_prefill_tokens, r.seconds * 1e3, r.seconds / cold_s);
  std::printf("\n");

  // The cache's own cost, per prompt token.
  const Tokens prompt = concat(prefix, bench_prompt(kPrompt - kCachedPrefix, c.vocab_size, 3));
  const int reps = 2000;
  std::vector<double> hash_ns, hit_ns, miss_ns;
  cache::BlockPool pool(256, kBlock, 0);
  const cache::BlockHash seed = cache::chain_seed({kScope, fp, kBlock, ""});
  std::vector<cache::BlockHash> chain;
  cache::extend_chain(chain, seed, prompt, kBlock);
  std::vector<BlockId> held;
  for (size_t i = 0; i < chain.size(); ++i) {
    const BlockId b = *pool.allocate(1);
    pool.commit(b, {chain[i], i == 0 ? seed : chain[i - 1], kScope, static_cast<int32_t>(i)},
                std::span(prompt).subspan(i * kBlock, kBlock));
    held.push_back(b);
  }
  std::reverse(held.begin(), held.end());
  pool.release(held);
  const Tokens stranger = bench_prompt(kPrompt, c.vocab_size, 9);
  std::vector<cache::BlockHash> stranger_chain;
  cache::extend_chain(stranger_chain, seed, stranger, kBlock);
  for (int rep = 0; rep < 5; ++rep) {
    auto t = Clock::now();
    for (int i = 0; i < reps; ++i) {
      std::vector<cache::BlockHash> ch;
      ch.reserve(kPrompt / kBlock);
      cache::extend_chain(ch, cache::chain_seed({kScope, fp, kBlock, ""}), prompt, kBlock);
      require(ch.size() == chain.size(), "the hash chain's length changed between runs");
    }
    hash_ns.push_back(seconds_since(t) * 1e9 / reps / kPrompt);
    t = Clock::now();
    for (int i = 0; i < reps; ++i) {
      std::vector<BlockId> hits = pool.lookup(kScope, seed, chain, prompt);
      require(hits.size() == chain.size(), "the full-hit lookup found " + std::to_string(hits.size()) + " of " +
                                               std::to_string(chain.size()) + " blocks");
      std::reverse(hits.begin(), hits.end());
      pool.release(hits);
    }
    hit_ns.push_back(seconds_since(t) * 1e9 / reps / kPrompt);
    t = Clock::now();
    for (int i = 0; i < reps; ++i)
      require(pool.lookup(kScope, seed, stranger_chain, stranger).empty(), "a stranger's prompt hit the cache");
    miss_ns.push_back(seconds_since(t) * 1e9 / reps / kPrompt);
  }
  const double prefill_ns = cold_s * 1e9 / kPrompt;
  const double h = median(hash_ns), hit = median(hit_ns), miss = median(miss_ns);
  std::printf("## Cache cost per prompt token (2,048 tokens, blocks of %d)\n\n", kBlock);
  std::printf("| step | ns/token | vs cold prefill (%.0f ns/token) |\n|---|---:|---:|\n", prefill_ns);
  std::printf("| hash chain (seed + XXH3-128 per block) | %.2f | %.4f%% |\n", h, 100 * h / prefill_ns);
  std::printf("| lookup, all 128 blocks hit (verify + reference + release) | %.2f | %.4f%% |\n", hit, 100 * hit / prefill_ns);
  std::printf("| lookup, first block misses | %.3f | %.5f%% |\n", miss, 100 * miss / prefill_ns);
  std::printf("| hash + full-hit lookup | %.2f | %.4f%% |\n", h + hit, 100 * (h + hit) / prefill_ns);
  return 0;
}
