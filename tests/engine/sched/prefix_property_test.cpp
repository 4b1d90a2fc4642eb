// The prefix cache must not change what the engine generates (DESIGN
// invariant 1). Random workloads — shared system prompts, multi-turn
// continuations, exact repeats, lengths on and across block boundaries,
// several scopes and salts, concurrent requests admitted at different
// times, pools small enough to evict all the time and to preempt — run
// twice through the Scheduler, cache on and cache off, and the greedy
// outputs must agree token for token.
//
// The two runs compute the same K/V through different code paths (a shared
// block was computed by another request's prefill, a suffix prefill is a
// smaller matrix product than a full one), so logits agree only to float
// rounding. A divergence (an "escape") is accepted only where the reference
// itself was a near-tie between the two tokens (|logit gap| < kTieTolerance,
// measured by a fresh backend prefilling the common context), and only a
// few of them: at most one per kRequestsPerEscape requests of a config.
// Each escape is printed with its gap, and the count is printed per config;
// on the reference machine there are none for these seeds (nor in 150 other
// seeds each of the B=4 and synthetic configs, ~19,000 requests). Every
// config runs with f32 and with f16 K/V (cache on and off with the same
// type; the reference for a gap is a backend of that type). Requests built
// on an escaped one (continuations of a different conversation) are not
// compared, and every request that is not compared must be one of those.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace kvgate::prefix_testing;

// Logits of these models differ between two code paths by a few 1e-5 (see
// CpuBackend.BatchedDecode*); a gap 100 times that is still a tie.
constexpr float kTieTolerance = 1e-3f;
constexpr TokenId kEos = 2;  // </s> in both vocabularies (stories260K's, llama-spm's)
// The bound on escapes: at most max(1, requests / 32) per config. Float
// noise makes exact ties rare; a run of them points at a real difference.
constexpr int kRequestsPerEscape = 32;

struct RequestSpec {
  int parent = -1;              // continue this earlier request's conversation
  bool repeat = false;          // send the parent's prompt again ...
  bool aligned = false;         // ... cut to whole blocks (a whole-prompt hit if still cached)
  int system = 0;               // which system prompt, for a fresh conversation
  Tokens user;                  // appended
  int32_t max_tokens = 1;
  bool ignore_eos = true;
  cache::ScopeId scope;
  std::string salt;
};

struct Wave {
  std::vector<RequestSpec> requests;
  int32_t add_later = 0;        // this many of them are added after a few steps
};

struct Workload {
  std::vector<Tokens> systems;
  std::vector<Wave> waves;
};

Workload make_workload(std::mt19937& rng, int32_t B, int32_t vocab, int n_waves, int per_wave) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto tokens = [&](int n) {
    Tokens t(static_cast<size_t>(n));
    for (auto& id : t) id = static_cast<TokenId>(uniform(3, vocab - 1));
    return t;
  };
  const int L = std::max(B, 8);  // the length scale: blocks, but not too short for tiny blocks
  Workload w;
  for (int len : {L, 2 * L + 3, uniform(1, 3 * L)}) w.systems.push_back(tokens(len));  // on and off boundaries
  const cache::ScopeId scopes[] = {{1, 1}, {2, 2}};
  int issued = 0;
  for (int wi = 0; wi < n_waves; ++wi) {
    Wave wave;
    for (int i = 0; i < per_wave; ++i) {
      RequestSpec r;
      const int roll = uniform(0, 99);
      if (issued > 0 && wi > 0 && roll < 35) {
        r.parent = uniform(0, issued - 1);  // an earlier wave's request
        r.user = tokens(uniform(1, 2 * L));
      } else if (issued > 0 && wi > 0 && roll < 55) {
        r.parent = uniform(0, issued - 1);
        r.repeat = true;
        r.aligned = roll >= 45;
      } else {
        r.system = uniform(0, 2);
        // Some users end exactly on a block boundary (whole-prompt hits later).
        const int sys_len = static_cast<int>(w.systems[r.system].size());
        const int n = roll % 4 == 0 ? (B - sys_len % B) % B + B * uniform(0, 1) : uniform(0, 2 * L + 3);
        r.user = tokens(n);
      }
      r.max_tokens = uniform(1, 2 * L);
      r.ignore_eos = uniform(0, 3) != 0;
      r.scope = scopes[uniform(0, 9) < 8 ? 0 : 1];
      if (uniform(0, 9) == 0) r.salt = "salt";
      wave.requests.push_back(std::move(r));
    }
    issued += per_wave;
    wave.add_later = uniform(0, per_wave / 2);
    w.waves.push_back(std::move(wave));
  }
  return w;
}

struct Played {
  std::vector<Request> requests;
  std::vector<RequestResult> results;
  cache::CacheStats stats;
  int64_t preemptions = 0;
};

// Runs the workload on one scheduler. A continuation's prompt is built from
// this run's own earlier results, cut to what the pool can hold.
Played play(const Workload& w, Scheduler& sched, int32_t B, int32_t max_positions) {
  Played o;
  for (const Wave& wave : w.waves) {
    std::vector<std::shared_ptr<RequestStream>> streams;
    const size_t first = o.requests.size();
    for (const RequestSpec& spec : wave.requests) {
      Request r;
      if (spec.parent >= 0) {
        const Request& parent = o.requests[static_cast<size_t>(spec.parent)];
        r.prompt = parent.prompt;
        if (spec.aligned && r.prompt.size() >= static_cast<size_t>(B))
          r.prompt.resize(r.prompt.size() / static_cast<size_t>(B) * static_cast<size_t>(B));
        if (!spec.repeat) {
          const Tokens& out = o.results[static_cast<size_t>(spec.parent)].output;
          r.prompt.insert(r.prompt.end(), out.begin(), out.end());
        }
      } else {
        r.prompt = w.systems[static_cast<size_t>(spec.system)];
      }
      r.prompt.insert(r.prompt.end(), spec.user.begin(), spec.user.end());
      r.max_tokens = spec.max_tokens;
      r.prompt.resize(std::min<size_t>(r.prompt.size(), static_cast<size_t>(max_positions - r.max_tokens)));
      r.sampling.temperature = 0;
      r.ignore_eos = spec.ignore_eos;
      r.scope = spec.scope;
      r.cache_salt = spec.salt;
      o.requests.push_back(r);
    }
    const size_t n = wave.requests.size(), now = n - static_cast<size_t>(wave.add_later);
    for (size_t i = 0; i < now; ++i) streams.push_back(sched.submit(o.requests[first + i], {}));
    for (int s = 0; s < 3 && !sched.idle(); ++s) {
      sched.step();
      sched.check_invariants();
    }
    for (size_t i = now; i < n; ++i) streams.push_back(sched.submit(o.requests[first + i], {}));
    drain(sched);
    for (const auto& st : streams) {
      EXPECT_TRUE(st->finished());
      o.results.push_back(st->finished() ? st->wait().result : RequestResult{});
    }
  }
  o.stats = sched.pool().stats();
  o.preemptions = sched.preemptions();
  return o;
}

// The reference's logit gap between tokens a and b after `context`.
float logit_gap(std::shared_ptr<const Model> model, KvType kv_type, const Tokens& context, TokenId a, TokenId b) {
  BackendOptions bo;
  bo.kv_type = kv_type;
  auto be = make_cpu_backend(model, bo);
  std::vector<BlockId> table(static_cast<size_t>(be->num_blocks()));
  std::iota(table.begin(), table.end(), 0);
  Logits out;
  SequenceStep st{context, 0, table, LogitsWanted::kLast};
  be->forward({&st, 1}, out);
  return std::abs(out.row(0)[a] - out.row(0)[b]);
}

struct Config {
  const char* name;
  std::shared_ptr<const Model> (*model)();
  int32_t block_size, n_blocks, max_running;
  int waves, per_wave;
  uint32_t seed;
  int min_whole_prompt_hits = 1;  // tiny pools and weak hashes may evict or miss them all
  cache::BlockHashFn hash_fn = cache::hash_block;
  bool preempts = false;          // the pool is small enough that the cache-on run must preempt
};

// Keeps 3 bits of the real hash: the index is full of collisions, all of
// which must be caught by verification.
cache::BlockHash weak_hash(const cache::BlockHash& parent, std::span<const TokenId> tokens) {
  return {cache::hash_block(parent, tokens).lo & 7u, 0};
}

std::shared_ptr<const Model> synthetic_model() {
  static auto m = synthetic(7);
  return m;
}

void check_config(const Config& c, KvType kv_type) {
  SCOPED_TRACE(c.name);
  auto model = c.model();
  std::mt19937 rng(c.seed);
  const Workload w = make_workload(rng, c.block_size, model->config().vocab_size, c.waves, c.per_wave);
  PrefixSpec on{c.block_size, c.n_blocks, true, c.max_running, kEos, c.hash_fn, nullptr};
  on.kv_type = kv_type;
  PrefixSpec off = on;
  off.prefix_cache = false;
  // A request may use all but one block (the copy-on-write spare); the last
  // output token needs no slot.
  const int32_t max_positions = (c.n_blocks - 1) * c.block_size + 1;
  auto run_on = make_prefix_scheduler(model, on), run_off = make_prefix_scheduler(model, off);
  const Played a = play(w, *run_on, c.block_size, max_positions);
  const Played b = play(w, *run_off, c.block_size, max_positions);

  // Each request's parent in the workload (-1: a fresh conversation).
  std::vector<int> parent;
  for (const Wave& wave : w.waves)
    for (const RequestSpec& spec : wave.requests) parent.push_back(spec.parent);

  int compared = 0, escapes = 0, whole_hits = 0;
  float widest_escape_gap = 0;
  int64_t cached = 0, prompts = 0;
  ASSERT_EQ(a.results.size(), b.results.size());
  ASSERT_EQ(a.results.size(), parent.size());
  std::vector<bool> differs(a.results.size(), false);  // prompt or output not the same in both runs
  for (size_t i = 0; i < a.results.size(); ++i) {
    const RequestResult &ra = a.results[i], &rb = b.results[i];
    const int32_t P = ra.prompt_tokens;
    EXPECT_EQ(P, ra.cached_tokens + ra.fresh_prefill_tokens);
    EXPECT_EQ(rb.cached_tokens, 0);
    // The cached-count rule: whole blocks, or all but the last prompt token.
    EXPECT_TRUE(ra.cached_tokens % c.block_size == 0 || (ra.cached_tokens == P - 1 && P % c.block_size == 0))
        << "request " << i << ": cached " << ra.cached_tokens << " of " << P;
    EXPECT_LT(ra.cached_tokens, P);
    cached += ra.cached_tokens;
    prompts += P;
    whole_hits += ra.cached_tokens == P - 1 && P % c.block_size == 0 && P > 1;
    if (a.requests[i].prompt != b.requests[i].prompt) {
      // Only a continuation of a request that already differed may differ.
      const int p = parent[i];
      EXPECT_TRUE(p >= 0 && differs[static_cast<size_t>(p)])
          << "request " << i << " got different prompts in the two runs, and its parent " << p << " did not differ";
      differs[i] = true;
      continue;
    }
    ++compared;
    const Tokens &oa = ra.output, &ob = rb.output;
    const auto d = std::mismatch(oa.begin(), oa.end(), ob.begin(), ob.end());
    if (d.first == oa.end() && d.second == ob.end()) {
      EXPECT_EQ(ra.finish, rb.finish) << "request " << i;
      continue;
    }
    differs[i] = true;
    ++escapes;
    // What each run chose at the first difference; an output that ended
    // there chose EOS (which is not part of the output).
    auto chosen = [&](const Tokens& o, Tokens::const_iterator at, const RequestResult& r) -> TokenId {
      if (at != o.end()) return *at;
      EXPECT_EQ(r.finish, FinishReason::kStop) << "request " << i << ": one output is a prefix of the other";
      return kEos;
    };
    const TokenId ta = chosen(oa, d.first, ra), tb = chosen(ob, d.second, rb);
    Tokens context = a.requests[i].prompt;
    context.insert(context.end(), ob.begin(), d.second);
    const float gap = logit_gap(model, kv_type, context, ta, tb);
    widest_escape_gap = std::max(widest_escape_gap, gap);
    std::printf("[ %-26s %4s ] escape: request %zu, output token %td: cache on chose %d, off chose %d, "
                "logit gap %.3g\n",
                c.name, std::string(kv_type_name(kv_type)).c_str(), i, d.second - ob.begin(), ta, tb,
                static_cast<double>(gap));
    EXPECT_LT(gap, kTieTolerance) << "request " << i << " diverges at output token " << (d.second - ob.begin())
                                  << " with cache on vs off, and it was no near-tie";
  }
  const int allowed_escapes = std::max(1, static_cast<int>(a.results.size()) / kRequestsPerEscape);
  EXPECT_LE(escapes, allowed_escapes) << "near-tie escapes: " << escapes << " in " << a.results.size()
                                      << " requests; more than floating-point noise explains";
  // The workload exercised what it is meant to.
  EXPECT_GT(cached, 0);
  EXPECT_GE(whole_hits, c.min_whole_prompt_hits);
  EXPECT_GT(a.stats.all.evictions, 0);
  if (c.preempts) {
    EXPECT_GT(a.preemptions, 0);
  }
  EXPECT_EQ(a.stats.blocks_in_use, 0);
  EXPECT_EQ(b.stats.blocks_in_use, 0);
  std::printf("[ %-26s %4s ] %zu requests, %d compared, %d near-tie escapes (at most %d; widest gap %.3g), %lld of "
              "%lld prompt tokens cached, %d whole-prompt hits, %lld evictions, %lld/%lld preemptions (cache on/off)\n",
              c.name, std::string(kv_type_name(kv_type)).c_str(), a.results.size(), compared, escapes, allowed_escapes,
              static_cast<double>(widest_escape_gap),
              static_cast<long long>(cached), static_cast<long long>(prompts), whole_hits,
              static_cast<long long>(a.stats.all.evictions), static_cast<long long>(a.preemptions),
              static_cast<long long>(b.preemptions));
}

std::string type_name(const ::testing::TestParamInfo<KvType>& info) { return std::string(kv_type_name(info.param)); }

class PrefixProperty : public ::testing::TestWithParam<KvType> {};
INSTANTIATE_TEST_SUITE_P(KvTypes, PrefixProperty, ::testing::Values(KvType::kF32, KvType::kF16), type_name);

TEST_P(PrefixProperty, Stories260KSmallBlocks) {
  check_config({"stories260K B=4", stories, 4, 120, 3, 10, 8, 101}, GetParam());
}

TEST_P(PrefixProperty, Stories260KOneTokenBlocks) {
  check_config({"stories260K B=1", stories, 1, 60, 2, 6, 6, 505}, GetParam());
}

TEST_P(PrefixProperty, Stories260KTinyPool) {
  check_config({"stories260K B=16 tiny", stories, 16, 9, 0, 8, 6, 202, 1, cache::hash_block, true}, GetParam());
}

TEST_P(PrefixProperty, Stories260KManyConcurrent) {
  check_config({"stories260K B=32 batch 12", stories, 32, 40, 0, 6, 12, 606}, GetParam());
}

TEST_P(PrefixProperty, Stories260KWeakHash) {
  check_config({"stories260K B=8 weak hash", stories, 8, 16, 4, 8, 8, 303, 0, weak_hash}, GetParam());
}

TEST_P(PrefixProperty, SyntheticModel) {
  check_config({"synthetic B=8", synthetic_model, 8, 64, 4, 8, 6, 404}, GetParam());
}

TEST_P(PrefixProperty, SyntheticModelTinyPool) {
  check_config({"synthetic B=4 tiny", synthetic_model, 4, 20, 3, 6, 6, 707, 0, cache::hash_block, true}, GetParam());
}

}  // namespace
}  // namespace kvgate
