// Helpers shared by the prefix cache tests (tests/engine/prefix_*_test.cpp):
// models, a runner over a pool of a chosen size, and a Backend decorator
// that records what each step ran.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine/backend.h"
#include "engine/batch_runner.h"
#include "engine/model.h"
#include "engine/model_fingerprint.h"
#include "engine/synthetic_model.h"
#include "tests/shared_data.h"

namespace kvgate::prefix_testing {

inline std::shared_ptr<const Model> stories() {
  static auto m = Model::load(kvgate::testing::shared_path("models/stories260K.gguf"));
  return m;
}

// A small synthetic Llama with the llama-spm vocabulary (32000 tokens),
// written once per process to a temp file that is unlinked once mapped.
inline std::shared_ptr<const Model> synthetic(uint64_t seed = 1) {
  SyntheticModelSpec s;
  s.layers = 2, s.dim = 64, s.heads = 4, s.kv_heads = 2, s.ffn = 128, s.context = 512, s.seed = seed;
  s.vocab_from = kvgate::testing::shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvgate-prefix-" + std::to_string(::getpid()) + "-" + std::to_string(seed) + ".gguf");
  write_synthetic_model(s, path.string());
  auto m = Model::load(path.string());
  std::filesystem::remove(path);
  return m;
}

inline const cache::ModelFingerprint& fingerprint_of(const Model& m) {
  static std::map<const Model*, cache::ModelFingerprint> memo;
  auto it = memo.find(&m);
  if (it == memo.end()) it = memo.emplace(&m, model_fingerprint(m)).first;
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
  int32_t block_size() const override { return inner_->block_size(); }
  int32_t num_blocks() const override { return inner_->num_blocks(); }
  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    auto& step = log_->steps.emplace_back();
    for (const SequenceStep& s : batch) step.emplace_back(s.start_pos, static_cast<int32_t>(s.tokens.size()));
    inner_->forward(batch, out);
  }
  size_t block_bytes() const override { return inner_->block_bytes(); }
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

struct RunnerSpec {
  int32_t block_size = 16;
  int32_t n_blocks = 0;  // 0: enough for one full context
  bool prefix_cache = true;
  int32_t max_running = 0;
  TokenId eos = -1;
  cache::BlockHashFn hash_fn = cache::hash_block;
  std::shared_ptr<StepLog> log;  // set: record steps
};

inline std::unique_ptr<BatchRunner> make_runner(std::shared_ptr<const Model> model, const RunnerSpec& spec) {
  BackendOptions bo;
  bo.block_size = spec.block_size;
  if (spec.n_blocks > 0)
    bo.kv_budget_bytes = model->config().kv_bytes_per_token(sizeof(float)) * spec.block_size * spec.n_blocks;
  RunnerOptions ro;
  ro.model = fingerprint_of(*model);
  ro.prefix_cache = spec.prefix_cache;
  ro.max_running = spec.max_running;
  ro.eos = spec.eos;
  ro.hash_fn = spec.hash_fn;
  std::unique_ptr<Backend> be = make_cpu_backend(model, bo);
  if (spec.log) be = std::make_unique<RecordingBackend>(std::move(be), spec.log);
  return std::make_unique<BatchRunner>(std::move(be), std::move(ro));
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

// Steps until idle, checking the runner's invariants after every step.
inline void drain(BatchRunner& r) {
  while (!r.idle()) {
    r.step();
    r.check_invariants();
  }
}

inline RequestResult run_one(BatchRunner& r, Request req) {
  const RequestId id = r.add(std::move(req));
  drain(r);
  auto res = r.take_result(id);
  EXPECT_TRUE(res.has_value());
  return res.value_or(RequestResult{});
}

// Deterministic pseudo-random token ids in [3, vocab).
inline Tokens some_tokens(size_t n, int32_t vocab, uint32_t salt) {
  Tokens t(n);
  uint32_t x = 2463534242u ^ (salt * 2654435761u);
  for (auto& id : t) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    id = static_cast<TokenId>(3 + x % static_cast<uint32_t>(vocab - 3));
  }
  return t;
}

}  // namespace kvgate::prefix_testing
