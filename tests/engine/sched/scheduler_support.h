// Helpers shared by the scheduler tests (tests/engine/scheduler_*_test.cpp):
// a scheduler over a pool of a chosen size, greedy requests, reference
// outputs of a request run alone, and a step-driven drain.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/sched/scheduler.h"
#include "tests/engine/sched/prefix_support.h"

namespace kvgate::sched_testing {

using prefix_testing::drain;
using prefix_testing::greedy;
using prefix_testing::some_tokens;
using prefix_testing::stories;

struct SchedSpec {
  int32_t block_size = 16;
  int32_t n_blocks = 0;  // 0: enough for one full context
  int32_t max_step_tokens = 512;
  int32_t max_running = 256;
  bool chunked = true;
  bool prefix_cache = true;
  bool prefer_cached_prefix = false;
};

inline BackendOptions backend_options(const Model& model, const SchedSpec& spec) {
  BackendOptions bo;
  bo.block_size = spec.block_size;
  if (spec.n_blocks > 0)
    bo.kv_budget_bytes = kv_budget_for_blocks(model.config(), KvType::kF32, spec.block_size, spec.n_blocks);
  return bo;
}

inline SchedulerOptions scheduler_options(const Model& model, const SchedSpec& spec) {
  SchedulerOptions so;
  so.model = prefix_testing::fingerprint_of(model);
  so.prefix_cache = spec.prefix_cache;
  so.max_step_tokens = spec.max_step_tokens;
  so.max_running = spec.max_running;
  so.chunked_prefill = spec.chunked;
  so.order.prefer_cached_prefix = spec.prefer_cached_prefix;
  return so;
}

inline std::unique_ptr<Scheduler> make_scheduler(std::shared_ptr<const Model> model, const SchedSpec& spec = {}) {
  return std::make_unique<Scheduler>(make_cpu_backend(model, backend_options(*model, spec)),
                                     scheduler_options(*model, spec));
}

// The output of `req` run alone on a fresh scheduler without the prefix cache.
inline Tokens alone(std::shared_ptr<const Model> model, const Request& req) {
  auto s = make_scheduler(model, {.prefix_cache = false});
  auto st = s->submit(req, {});
  drain(*s);
  return st->wait().result.output;
}

// Deterministic mixed workload: prompts of 16..96 tokens, 6..16 outputs.
inline std::vector<Request> workload(size_t n, uint32_t salt) {
  std::vector<Request> reqs;
  for (size_t i = 0; i < n; ++i) {
    const auto len = 16 + (i * 37 + salt) % 81;
    const auto out = static_cast<int32_t>(6 + (i * 5 + salt) % 11);
    reqs.push_back(greedy(some_tokens(len, 512, static_cast<uint32_t>(i) + salt * 1000), out));
  }
  return reqs;
}

}  // namespace kvgate::sched_testing
