// One usage value from the engine to every output. A request whose cached
// blocks come from the device pool, the host tier and the disk tier: the
// same numbers, tier by tier, in its ledger record, in its tenant's
// metrics, and in the usage JSON its client is sent.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cache/block_hash.h"
#include "cache/tiers/disk_tier.h"
#include "cache/tiers/host_tier.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/tier_identity.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/pipeline.h"
#include "gateway/serving/reply_sinks.h"
#include "gateway/serving/serving_metrics.h"
#include "gateway/serving/tenant_identity.h"
#include "tests/engine/test_models.h"
#include "tests/engine/test_tokens.h"
#include "tests/gateway/serving/recording_sink.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

constexpr int32_t kBlockTokens = 16;

class UsageByTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = kvgate::testing::stories();
    BackendOptions bo;
    bo.block_size = kBlockTokens;
    bo.kv_budget_bytes = kv_budget_for_blocks(model_->config(), KvType::kF32, kBlockTokens, 12);
    std::unique_ptr<Backend> backend = make_cpu_backend(model_, bo);
    SchedulerOptions so;
    so.model = model_fingerprint(*model_, KvLayout{KvType::kF32});
    fingerprint_ = so.model;
    const cache::KvIdentity id = tier_identity(*backend, so.model);
    const auto record = static_cast<int64_t>(cache::record_bytes(id));
    host_ = std::make_shared<cache::HostTier>(256 * record, id);
    cache::DiskTierOptions o;
    o.dir = dir_.sub("kv");
    o.capacity_bytes = 4096 * record;
    o.identity = id;
    disk_ = cache::DiskTier::open(std::move(o));
    so.tiers = {host_, disk_};
    engine_ = std::make_unique<Engine>(std::move(backend), std::move(so), EngineOptions{.max_outstanding = 8});
    tokenizer_ = Tokenizer::from_gguf(model_->file());
    tenancy_ = std::make_unique<tenancy::Tenancy>(dir_.sub("store"));
    tenancy_->tenants().put_plan(tenancy::PricePlan::with_default_cached("p", 1'000'000, 2'000'000));
    pipeline_ = std::make_unique<Pipeline>(*engine_, *tenancy_, *tokenizer_, work_, metrics_);
  }
  void TearDown() override { engine_->shutdown(); }

  tenancy::Principal tenant(const std::string& id) {
    tenancy::NewTenant n;
    n.id = id, n.plan_id = "p";
    tenancy_->tenants().create(n);
    return *tenancy_->authenticate(tenancy_->keys().create(id, "test").plaintext);
  }

  Served run(const tenancy::Principal& who, Tokens prompt) {
    ServeRequest r;
    r.who = who;
    r.request_id = "req-" + std::to_string(++n_);
    r.model = "stories260K";
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0;
    r.max_tokens = 2;
    r.ignore_eos = true;
    auto sink = std::make_shared<RecordingSink>();
    EXPECT_TRUE(std::holds_alternative<RequestId>(pipeline_->start(std::move(r), sink)));
    return sink->wait();
  }

  // Every copy down to the host and disk tiers done and durable.
  void settle() {
    engine_->control([](Scheduler& s) { s.settle_tiers(); });
    disk_->flush();
  }

  kvgate::testing::TempDir dir_;
  std::shared_ptr<const Model> model_;
  cache::ModelFingerprint fingerprint_;
  std::shared_ptr<cache::HostTier> host_;
  std::shared_ptr<cache::DiskTier> disk_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<tenancy::Tenancy> tenancy_;
  BlockingPool work_;
  ServingMetrics metrics_{"stories260K", 0};
  std::unique_ptr<Pipeline> pipeline_;
  int n_ = 0;
};

TEST_F(UsageByTierTest, TheLedgerTheMetricsAndTheClientsJsonAgreeTierByTier) {
  const tenancy::Principal acme = tenant("acme");
  const int32_t vocab = model_->config().vocab_size;
  const Tokens prompt = kvgate::testing::some_tokens(6 * kBlockTokens + 4, vocab, 41);  // six full blocks
  run(acme, prompt);
  settle();
  for (uint32_t i = 0; i < 3; ++i) run(acme, kvgate::testing::some_tokens(6 * kBlockTokens, vocab, 50 + i));
  settle();  // the device pool (12 blocks) no longer holds the prompt; both tiers do
  // Blocks 2 and 3 leave the host tier (as damaged records would): only the disk has them.
  const TenantIdentity ti = tenant_identity(tenancy_->tenants(), acme.tenant);
  std::vector<cache::BlockHash> chain;
  cache::extend_chain(chain, cache::chain_seed({ti.scope, fingerprint_, kBlockTokens, ""}), prompt, kBlockTokens,
                      cache::hash_block);
  for (size_t i : {2, 3}) host_->drop_corrupt({ti.scope, chain[i]}, cache::RecordFault::kPayloadChecksum);
  // Blocks 0 and 1 back in the device pool, by a prompt of them and one token more.
  run(acme, Tokens(prompt.begin(), prompt.begin() + 2 * kBlockTokens + 1));

  metrics_.collect(*engine_);
  const boost::json::object before = metrics_.dashboard("acme").at("tenants").as_array().at(0).as_object();
  const Served s = run(acme, prompt);
  const tenancy::TokenUsage& u = s.usage;
  ASSERT_EQ(u.cached_device, 2u * kBlockTokens);
  ASSERT_EQ(u.cached_disk, 2u * kBlockTokens);
  ASSERT_EQ(u.cached_host, 2u * kBlockTokens);
  EXPECT_EQ(u.fresh_prefill, 4u);

  // The ledger's record: the same value.
  const auto rec = tenancy_->ledger().find("req-" + std::to_string(n_));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->tokens, u);
  EXPECT_EQ(rec->cost_micros, s.cost_micros);

  // The tenant's metrics: raised by exactly these numbers.
  metrics_.collect(*engine_);
  const boost::json::object after = metrics_.dashboard("acme").at("tenants").as_array().at(0).as_object();
  auto raised = [&](const char* tier) {
    return after.at("cached_tokens").at(tier).to_number<uint64_t>() -
           before.at("cached_tokens").at(tier).to_number<uint64_t>();
  };
  EXPECT_EQ(raised("device"), u.cached_device);
  EXPECT_EQ(raised("host"), u.cached_host);
  EXPECT_EQ(raised("disk"), u.cached_disk);

  // What the client is sent: OpenAI's cached_tokens and kvgate's tiers.
  const boost::json::value usage = openai::to_json(usage_report(s));
  EXPECT_EQ(usage.at("prompt_tokens").to_number<uint64_t>(), u.prompt_tokens);
  EXPECT_EQ(usage.at("prompt_tokens_details").at("cached_tokens").to_number<uint64_t>(), u.cached());
  const boost::json::value& by_tier = usage.at("kvgate").at("cached_tokens_by_tier");
  EXPECT_EQ(by_tier.at("device").to_number<uint64_t>(), u.cached_device);
  EXPECT_EQ(by_tier.at("host").to_number<uint64_t>(), u.cached_host);
  EXPECT_EQ(by_tier.at("disk").to_number<uint64_t>(), u.cached_disk);
  EXPECT_EQ(usage.at("kvgate").at("fresh_prefill_tokens").to_number<uint64_t>(), u.fresh_prefill);
}

}  // namespace
}  // namespace kvgate::serving
