// The prefix cache on and off through the Scheduler, on the CUDA backend:
// the same greedy outputs, and the CPU backend's outputs (DESIGN.md's first
// invariant, on the device); for stories260K, and for gemma 3 with a
// window shorter than the shared prefix (sliding layers after a hit).
#include <filesystem>

#include "engine/backend_registry.h"
#include "engine/model/model_fingerprint.h"
#include "engine/model/synthetic_model.h"
#include "engine/sched/scheduler.h"
#include "tests/engine/test_models.h"
#include "tests/engine/test_tokens.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

using kvgate::testing::some_tokens;

// Requests that share prefixes: a system prompt and turns after it, a
// whole-prompt repeat, and a prompt of exactly two blocks.
std::vector<Tokens> prompts(int32_t vocab) {
  const Tokens system = some_tokens(40, vocab, 1);
  std::vector<Tokens> out;
  for (uint32_t u = 0; u < 4; ++u) {
    Tokens p = system;
    const Tokens user = some_tokens(5 + 7 * u, vocab, 10 + u);
    p.insert(p.end(), user.begin(), user.end());
    out.push_back(p);
  }
  out.push_back(out[1]);
  out.push_back(some_tokens(32, vocab, 30));
  out.push_back(out.back());
  return out;
}

// Each prompt's 12 greedy tokens, one request at a time, then all at once.
std::vector<Tokens> run(const std::string& backend, bool prefix_cache, std::shared_ptr<const Model> model) {
  BackendOptions bo;
  bo.kv_budget_bytes = kv_budget_for_blocks(model->config(), KvType::kF32, 16, 64);
  auto be = make_backend(backend, model, bo);
  SchedulerOptions so;
  so.model = model_fingerprint(*model, be->kv_layout());
  so.prefix_cache = prefix_cache;
  Scheduler sched(std::move(be), std::move(so));
  auto request = [](Tokens prompt) {
    Request r;
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0;
    r.max_tokens = 12;
    r.ignore_eos = true;
    r.scope = {1, 1};
    return r;
  };
  std::vector<Tokens> outputs;
  const auto ps = prompts(model->config().vocab_size);
  for (const Tokens& p : ps) {
    auto st = sched.submit(request(p), {});
    while (!sched.idle()) sched.step();
    outputs.push_back(st->wait().result.output);
  }
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const Tokens& p : ps) streams.push_back(sched.submit(request(p), {}));
  while (!sched.idle()) sched.step();
  for (auto& st : streams) outputs.push_back(st->wait().result.output);
  return outputs;
}

using CudaPrefixCache = CudaTest;

TEST_F(CudaPrefixCache, OnAndOffGiveTheSameTokensAsEachOtherAndAsTheCpu) {
  auto model = testing::stories();
  const auto on = run("cuda", true, model);
  EXPECT_EQ(on, run("cuda", false, model));
  EXPECT_EQ(on, run("cpu", true, model));
}

// gemma 3's shape (Q/K norms, GeGLU, post-norms, five sliding layers in
// six) with a window of 16: the 40-token system prompt and the 32-token
// prompts reach past it, so every warm request's suffix attends through a
// window that starts inside the cached blocks.
TEST_F(CudaPrefixCache, SlidingWindowModelOnAndOffGiveTheCpusTokens) {
  SyntheticModelSpec s;
  s.arch = "gemma3", s.layers = 6, s.dim = 64, s.heads = 4, s.kv_heads = 2, s.head_dim = 32, s.ffn = 128;
  s.context = 512, s.sliding_window = 16, s.seed = 5;
  s.vocab_from = testing::shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() / ("kvgate-cuda-gemma3-" + std::to_string(::getpid()) + ".gguf");
  write_synthetic_model(s, path.string());
  auto model = Model::load(path.string());
  std::filesystem::remove(path);
  const auto on = run("cuda", true, model);
  EXPECT_EQ(on, run("cuda", false, model));
  EXPECT_EQ(on, run("cpu", true, model));
}

}  // namespace
}  // namespace kvgate
