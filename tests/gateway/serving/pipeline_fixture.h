// The request pipeline as the serving and admin suites drive it: a real
// engine on stories260K (256 KV blocks, at most 8 requests in it), a real
// tenancy store in a temporary folder with a price plan "p", the blocking
// pool, the metrics, and a way to add a tenant with an API key.
//
// PipelineFixture builds one per test. Opening and closing the tenancy
// store is most of that (some forty synced writes), so a suite of many
// short tests keeps one PipelineStack for the whole suite instead
// (SuiteStack: one per process, and ctest runs each test in its own, so
// this pays off when the suite's binary runs the suite) and gives each test
// tenants of its own: scopes, quotas, ledger rows and metric series are
// all per tenant.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/engine.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/pipeline.h"
#include "gateway/serving/serving_metrics.h"
#include "tenancy/tenancy.h"
#include "tests/engine/test_models.h"
#include "tests/temp_dir.h"

namespace kvgate::serving::testing {

inline constexpr const char* kModelId = "stories260K";
// A prompt of several full KV blocks, in the model's own register.
inline const std::string kStoryPrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine with "
    "her dog and her friends, and every day she went to the park to look at the flowers and the birds.";

// The fields keep the names PipelineFixture's tests have always used.
class PipelineStack {
 public:
  // `store_fs`: the tenancy store's file system (null: the machine's).
  explicit PipelineStack(std::shared_ptr<rocksdb::FileSystem> store_fs = nullptr) {
    model_ = kvgate::testing::stories();
    tokenizer_ = Tokenizer::from_gguf(model_->file());
    BackendOptions bo;
    bo.kv_budget_bytes = kv_budget_for_blocks(model_->config(), KvType::kF32, bo.block_size, 256);
    SchedulerOptions so;
    so.model = model_fingerprint(*model_, KvLayout{KvType::kF32});
    so.eos = tokenizer_->eos();
    engine_ = std::make_unique<Engine>(make_cpu_backend(model_, bo), std::move(so), EngineOptions{.max_outstanding = 8});
    tenancy_ = std::make_unique<tenancy::Tenancy>(dir_.sub("store"), tenancy::SystemClock::instance(),
                                                  tenancy::ResponseLimits{}, std::move(store_fs));
    tenancy_->tenants().put_plan(tenancy::PricePlan::with_default_cached("p", 1'000'000, 2'000'000));
    pipeline_ = std::make_unique<Pipeline>(*engine_, *tenancy_, *tokenizer_, billing_, metrics_);
  }
  ~PipelineStack() { engine_->shutdown(); }
  PipelineStack(const PipelineStack&) = delete;
  PipelineStack& operator=(const PipelineStack&) = delete;

  // A new active tenant on plan "p" with quotas `q`, and its API key.
  std::string new_key(const std::string& id, tenancy::QuotaLimits q = {}) {
    tenancy::NewTenant n;
    n.id = id, n.plan_id = "p", n.quotas = q;
    tenancy_->tenants().create(n);
    return tenancy_->keys().create(id, "test").plaintext;
  }
  // The same, authenticated.
  tenancy::Principal tenant(const std::string& id, tenancy::QuotaLimits q = {}) {
    return *tenancy_->authenticate(new_key(id, q));
  }
  // The engine's step count once the loop has stored its last step's (a
  // step boundary): what a test compares to see whether work was done.
  int64_t settled_steps() {
    (void)engine_->available_blocks();
    return engine_->steps();
  }

  kvgate::testing::TempDir dir_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<tenancy::Tenancy> tenancy_;
  BlockingPool billing_;
  BlockingPool admin_{2, 64};  // the server's three pools (blocking_pool.h)
  BlockingPool side_{2, 64};
  ServingMetrics metrics_{kModelId, 0};
  std::unique_ptr<Pipeline> pipeline_;
};

// A PipelineStack for each test.
class PipelineFixture : public ::testing::Test, public PipelineStack {};

// One PipelineStack for a whole suite (`Suite` is the suite's own fixture
// class, so each suite gets a stack of its own), and a tenant id for each
// test: tenant_id("other") is unique to the test that asks.
template <class Suite>
class SuiteStack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { stack_ = std::make_unique<PipelineStack>(store_fs_); }
  static void TearDownTestSuite() { stack_.reset(); }

  static PipelineStack& stack() { return *stack_; }
  std::string tenant_id(const std::string& name = "acme") const { return name + "-" + std::to_string(test_); }

  // Set before SetUpTestSuite: the file system of the suite's tenancy store.
  static inline std::shared_ptr<rocksdb::FileSystem> store_fs_;

 private:
  static inline std::unique_ptr<PipelineStack> stack_;
  static inline int tests_ = 0;
  const int test_ = ++tests_;
};

}  // namespace kvgate::serving::testing
