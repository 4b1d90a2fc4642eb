// Helpers shared by the prefix cache tests (tests/engine/sched/prefix_*_test.cpp): a Scheduler over a pool of a chosen size, and a Backend decorator
// that records what each step ran.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/tiers/kv_identity.h"
#include "engine/backend.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/scheduler.h"
#include "engine/cpu/cpu_backend.h"
#include "tests/engine/test_models.h"
#include "tests/engine/test_tokens.h"

namespace kvgate::prefix_testing {

using kvgate::testing::stories;
using kvgate::testing::synthetic;

// The fingerprint the CPU backend's pool of element type `t` is cached under.
inline const cache::ModelFingerprint& fingerprint_of(const Model& m, KvType t = KvType::kF32) {
  static std::map<std::pair<const Model*, KvType>, cache::ModelFingerprint> memo;
  auto it = memo.find({&m, t});
  if (it == memo.end()) it = memo.emplace(std::pair(&m, t), model_fingerprint(m, KvLayout{t})).first;
  return it->second;
}

// What each forward() ran: per sequence, (start_pos, token count).
struct StepLog {
  std::vector<std::vector<std::pair<int32_t, int32_t>>> steps;
  std::vector<std::pair<BlockId, BlockId>> copies;
};

class RecordingBackend final : public Backend {
 public:
  RecordingBackend(std::unique_ptr<Backend> inner, std::shared_ptr<StepLog> log)
      : inner_(std::move(inner)), log_(std::move(log)) {}
  std::string_view name() const override { return inner_->name(); }
  const ModelConfig& config() const override { return inner_->config(); }
  KvLayout kv_layout() const override { return inner_->kv_layout(); }
  const KvCapacity& kv_capacity() const override { return inner_->kv_capacity(); }
  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    auto& step = log_->steps.emplace_back();
    for (const SequenceStep& s : batch) step.emplace_back(s.start_pos, static_cast<int32_t>(s.tokens.size()));
    inner_->forward(batch, out);
  }
  void copy_block_to_host(BlockId b, std::span<std::byte> dst) const override { inner_->copy_block_to_host(b, dst); }
  void copy_block_from_host(BlockId b, std::span<const std::byte> src) override { inner_->copy_block_from_host(b, src); }
  void copy_block(BlockId src, BlockId dst) override {
    log_->copies.emplace_back(src, dst);
    inner_->copy_block(src, dst);
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::shared_ptr<StepLog> log_;
};

// The identity the KV tiers must be opened with for `m` on the CPU backend
// (tier_identity.h computes the same from a backend).
inline cache::KvIdentity tier_identity_of(const Model& m, int32_t block_size) {
  cache::KvIdentity id;
  id.model = fingerprint_of(m);
  id.n_layers = m.config().n_layers;
  id.n_kv_heads = m.config().n_kv_heads;
  id.head_dim = m.config().head_dim;
  id.kv_type = static_cast<uint8_t>(KvType::kF32);
  id.block_size = block_size;
  return id;
}

struct PrefixSpec {
  int32_t block_size = 16;
  int32_t n_blocks = 0;  // 0: enough for one full context
  bool prefix_cache = true;
  int32_t max_running = 0;  // 0: as many as the step budget
  TokenId eos = -1;
  cache::BlockHashFn hash_fn = cache::hash_block;
  std::shared_ptr<StepLog> log;  // set: record steps
  // Larger than every prompt these tests send, so that a prompt's uncached
  // part is prefilled in the step that admits it (the step logs say so).
  int32_t max_step_tokens = 512;
  std::function<SteadyClock::time_point()> clock;  // set: the pins' clock
  int32_t tenant_pinned_percent = 10;  // SchedulerOptions' default pin quota of one tenant
  cache::LowerTiers tiers;  // the host and disk tiers below the pool (opened with tier_identity)
  KvType kv_type = KvType::kF32;  // the pool's element type
};

inline std::unique_ptr<Scheduler> make_prefix_scheduler(std::shared_ptr<const Model> model, const PrefixSpec& spec) {
  BackendOptions bo;
  bo.block_size = spec.block_size;
  bo.kv_type = spec.kv_type;
  if (spec.n_blocks > 0)
    bo.kv_budget_bytes = kv_budget_for_blocks(model->config(), spec.kv_type, spec.block_size, spec.n_blocks);
  SchedulerOptions so;
  so.model = fingerprint_of(*model, spec.kv_type);
  so.prefix_cache = spec.prefix_cache;
  so.max_running = spec.max_running;
  so.max_step_tokens = spec.max_step_tokens;
  so.eos = spec.eos;
  so.hash_fn = spec.hash_fn;
  if (spec.clock) so.clock = spec.clock;
  so.tenant_pinned_percent = spec.tenant_pinned_percent;
  so.tiers = spec.tiers;
  std::unique_ptr<Backend> be = make_cpu_backend(model, bo);
  if (spec.log) be = std::make_unique<RecordingBackend>(std::move(be), spec.log);
  return std::make_unique<Scheduler>(std::move(be), std::move(so));
}

inline Request greedy(Tokens prompt, int32_t max_tokens, cache::ScopeId scope = {1, 1}) {
  Request r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  r.scope = scope;
  return r;
}

// Steps until idle, checking invariants after every step; returns the steps taken.
inline int64_t drain(Scheduler& s, int64_t max_steps = 100000) {
  int64_t n = 0;
  while (!s.idle() && n < max_steps) {
    s.step();
    s.check_invariants();
    ++n;
  }
  EXPECT_TRUE(s.idle());
  return n;
}

// Submits `req`, drains, and returns its result from the stream's completion.
// Runs one request to its end; every result it returns has its cached
// tokens split by tier at the source: device + host + disk = cached.
inline RequestResult run_one(Scheduler& s, Request req, Submitter who = {}) {
  auto st = s.submit(std::move(req), who);
  drain(s);
  EXPECT_TRUE(st->finished());
  const RequestResult r = st->finished() ? st->wait().result : RequestResult{};
  EXPECT_EQ(r.cached_device_tokens + r.cached_host_tokens + r.cached_disk_tokens, r.cached_tokens);
  EXPECT_EQ(r.cached_tokens + r.fresh_prefill_tokens, r.prompt_tokens);
  return r;
}

using kvgate::testing::some_tokens;

}  // namespace kvgate::prefix_testing
