// The request pipeline end to end below HTTP: a real engine on stories260K,
// a real tenancy store, a sink that records what a client would be sent.
// Checks the invariants the gateway owes its users: no cross-tenant reuse,
// cache_salt narrows a scope, the ledger says what the client was told,
// prompt = cached + fresh, every refusal leaves nothing charged.
#include "gateway/serving/pipeline.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>
#include <limits>

#include <memory>
#include <string>

#include "gateway/serving/tenant_identity.h"
#include "tests/gateway/serving/pipeline_fixture.h"
#include "tests/gateway/serving/recording_sink.h"

namespace kvgate::serving {
namespace {

class PipelineTest : public testing::PipelineFixture {
 protected:
  ServeRequest request(const tenancy::Principal& who, const std::string& prompt, int32_t max_tokens) {
    ServeRequest r;
    r.who = who;
    r.request_id = "req-" + std::to_string(++n_);
    r.model = "stories260K";
    r.prompt = tokenizer_->encode(prompt, {.add_bos = true, .parse_special = false});
    r.continuation = true;
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    return r;
  }

  // Runs one request to its end and checks what the ledger says against it.
  Served run(ServeRequest r, std::string* text = nullptr) {
    auto sink = std::make_shared<RecordingSink>();
    const std::string rid = r.request_id;
    auto started = pipeline_->start(std::move(r), sink);
    EXPECT_TRUE(std::holds_alternative<RequestId>(started));
    if (!std::holds_alternative<RequestId>(started)) return {};
    const Served s = sink->wait();
    if (text) *text = sink->text();
    const auto rec = tenancy_->ledger().find(rid);
    EXPECT_EQ(rec.has_value(), s.recorded);
    if (rec) {
      EXPECT_EQ(rec->tokens, s.usage) << "the ledger and the client disagree";
      EXPECT_EQ(rec->cost_micros, s.cost_micros);
      EXPECT_EQ(rec->tokens.prompt_tokens, rec->tokens.cached() + rec->tokens.fresh_prefill);
    }
    return s;
  }

  // `r`, pinning its whole prompt for 5 minutes, is refused before it
  // starts: a 429 naming `limit`, its message holding `says`, nothing billed.
  void expect_pin_refused(ServeRequest r, tenancy::Limit limit, const std::string& says) {
    r.pins = {{static_cast<int32_t>(r.prompt.size()), std::chrono::seconds(300)}};
    auto refused = pipeline_->start(r, std::make_shared<RecordingSink>());
    ASSERT_TRUE(std::holds_alternative<NotStarted>(refused));
    const NotStarted& no = std::get<NotStarted>(refused);
    EXPECT_EQ(no.why, NotStarted::Why::kQuota);
    ASSERT_TRUE(no.quota);
    EXPECT_EQ(no.quota->limit, limit);
    EXPECT_NE(no.message.find(says), std::string::npos) << no.message;
    EXPECT_FALSE(tenancy_->ledger().find(r.request_id)) << "nothing ran, nothing is billed";
  }

  const std::string long_prompt_ = testing::kStoryPrompt;
  int n_ = 0;
};

TEST_F(PipelineTest, ARepeatedPromptIsServedFromTheCacheAndBilledAsCached) {
  const auto acme = tenant("acme");
  const Served first = run(request(acme, long_prompt_, 8));
  const Served second = run(request(acme, long_prompt_, 8));
  EXPECT_TRUE(first.recorded && second.recorded);
  EXPECT_EQ(first.usage.cached(), 0u);
  EXPECT_GT(second.usage.cached(), 0u);
  EXPECT_LT(second.cost_micros, first.cost_micros);  // cached prompt tokens cost 10%
  EXPECT_EQ(first.usage.output_tokens, 8u);
  EXPECT_EQ(first.finish, FinishReason::kLength);
}

TEST_F(PipelineTest, AnotherTenantNeverReusesTheBlocksAndASaltSplitsAScope) {
  const auto a = tenant("a"), b = tenant("b");
  run(request(a, long_prompt_, 4));
  EXPECT_EQ(run(request(b, long_prompt_, 4)).usage.cached(), 0u);  // the same prompt, another tenant
  EXPECT_GT(run(request(b, long_prompt_, 4)).usage.cached(), 0u);  // b's own second request hits
  ServeRequest salted = request(a, long_prompt_, 4);
  salted.cache_salt = "user-7";
  EXPECT_EQ(run(salted).usage.cached(), 0u);
  ServeRequest again = request(a, long_prompt_, 4);
  again.cache_salt = "user-7";
  EXPECT_GT(run(again).usage.cached(), 0u);
}

TEST_F(PipelineTest, AStopStringEndsTheRequestAndIsNotSent) {
  const auto acme = tenant("acme");
  std::string free_text;
  run(request(acme, "Once upon a time", 40), &free_text);
  ASSERT_GT(free_text.size(), 12u);
  const std::string stop = free_text.substr(6, 5);
  ServeRequest r = request(acme, "Once upon a time", 40);
  r.stop = {stop};
  std::string text;
  const Served s = run(std::move(r), &text);
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(text, free_text.substr(0, free_text.find(stop)));
  EXPECT_LT(s.usage.output_tokens, 40u);  // cancelled, not run to the limit
}

TEST_F(PipelineTest, RefusalsChargeNothing) {
  const auto tight = tenant("tight", {.requests_per_minute = 1});
  run(request(tight, "Once upon a time", 2));
  auto over = pipeline_->start(request(tight, "Once upon a time", 2), std::make_shared<RecordingSink>());
  ASSERT_TRUE(std::holds_alternative<NotStarted>(over));
  EXPECT_EQ(std::get<NotStarted>(over).why, NotStarted::Why::kQuota);
  ASSERT_TRUE(std::get<NotStarted>(over).quota);
  EXPECT_EQ(std::get<NotStarted>(over).quota->limit, tenancy::Limit::kRequestsPerMinute);

  const auto one = tenant("one", {.max_concurrent_requests = 1});
  auto too_long = pipeline_->start(request(one, "Once upon a time", 100000), std::make_shared<RecordingSink>());
  ASSERT_TRUE(std::holds_alternative<NotStarted>(too_long));
  EXPECT_EQ(std::get<NotStarted>(too_long).why, NotStarted::Why::kBadRequest);
  EXPECT_NE(std::get<NotStarted>(too_long).message.find("max_tokens"), std::string::npos);
  EXPECT_TRUE(run(request(one, "Once upon a time", 2)).recorded);  // its one slot was never taken
}

TEST_F(PipelineTest, AFullEngineIsBusyAndTheQuotaSlotIsGivenBack) {
  const auto acme = tenant("acme", {.max_concurrent_requests = 20});
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<RequestId> ids;
  for (int i = 0; i < 8; ++i) {
    sinks.push_back(std::make_shared<RecordingSink>());
    auto s = pipeline_->start(request(acme, long_prompt_, 200), sinks.back());
    ASSERT_TRUE(std::holds_alternative<RequestId>(s));
    ids.push_back(std::get<RequestId>(s));
  }
  auto busy = pipeline_->start(request(acme, "Once", 2), std::make_shared<RecordingSink>());
  ASSERT_TRUE(std::holds_alternative<NotStarted>(busy));
  EXPECT_EQ(std::get<NotStarted>(busy).why, NotStarted::Why::kBusy);
  for (RequestId id : ids) pipeline_->cancel(id);
  for (auto& s : sinks) {
    const Served served = s->wait();
    EXPECT_EQ(served.finish, FinishReason::kCancelled);
  }
  EXPECT_EQ(engine_->available_blocks(), engine_->num_blocks());
  EXPECT_TRUE(run(request(acme, "Once", 2)).recorded);
}

// The metrics move exactly as requests run: by the numbers each client was
// told and each ledger record holds, never by estimates.
TEST_F(PipelineTest, MetricsMoveByEachRequestsOwnUsage) {
  const auto acme = tenant("acme");
  const auto other = tenant("other");
  auto row = [&](const std::string& id) {
    metrics_.collect(*engine_);
    const boost::json::object d = metrics_.dashboard(id);
    const boost::json::array& rows = d.at("tenants").as_array();
    EXPECT_EQ(rows.size(), 1u) << "a tenant's view holds its own row alone";
    return rows.empty() ? boost::json::object{} : rows[0].as_object();
  };
  auto u64 = [](const boost::json::value& v) { return v.to_number<uint64_t>(); };
  auto micros = [](const boost::json::value& v) { return static_cast<uint64_t>(std::llround(v.to_number<double>() * 1e6)); };

  const Served first = run(request(acme, long_prompt_, 4));
  boost::json::object a = row("acme");
  EXPECT_EQ(u64(a["requests"]), 1u);
  EXPECT_EQ(u64(a["prompt_tokens"]), first.usage.prompt_tokens);
  EXPECT_EQ(u64(a["cached_tokens"].at("device")), 0u);
  EXPECT_EQ(u64(a["fresh_prefill_tokens"]), first.usage.fresh_prefill);
  EXPECT_EQ(u64(a["output_tokens"]), first.usage.output_tokens);

  const Served second = run(request(acme, long_prompt_, 4));
  ASSERT_GT(second.usage.cached_device, 0u);
  a = row("acme");
  EXPECT_EQ(u64(a["cached_tokens"].at("device")), second.usage.cached_device) << "raised by its cached_tokens";
  EXPECT_EQ(u64(a["prompt_tokens"]), first.usage.prompt_tokens + second.usage.prompt_tokens);
  EXPECT_EQ(u64(a["prefix_cache_hits_tokens"]), second.usage.cached()) << "the engine's hits are the billed cached tokens";
  EXPECT_EQ(u64(a["prefix_cache_queries_tokens"]), first.usage.prompt_tokens + second.usage.prompt_tokens);
  EXPECT_EQ(micros(a["cost_usd"]), first.cost_micros + second.cost_micros);
  EXPECT_GT(micros(a["cost_without_cache_usd"]), micros(a["cost_usd"])) << "the cached tokens saved something";

  const Served theirs = run(request(other, long_prompt_, 4));
  EXPECT_EQ(theirs.usage.cached(), 0u);
  boost::json::object o = row("other");
  EXPECT_EQ(u64(o["requests"]), 1u);
  EXPECT_EQ(u64(o["cached_tokens"].at("device")), 0u);

  // The sum of the tenants' cost is the ledger's.
  uint64_t ledger = 0, exported = 0;
  for (const std::string id : {"acme", "other"}) {
    ledger += tenancy_->ledger().usage(id, 0, std::numeric_limits<int64_t>::max()).cost_micros;
    exported += micros(row(id)["cost_usd"]);
  }
  EXPECT_EQ(exported, ledger);

  const boost::json::object all = metrics_.dashboard(std::nullopt);
  EXPECT_EQ(all.at("tenants").as_array().size(), 2u);
  EXPECT_EQ(all.at("latency").at("ttft_s").at("count").to_number<uint64_t>(), 3u);
  EXPECT_EQ(all.at("kv").at(0).at("blocks_in_use").to_number<int64_t>(), 0) << "nothing in flight";
}

TEST_F(PipelineTest, MetricsCountARefusalOnceByItsLimitAndNothingElse) {
  const auto tight = tenant("tight", {.requests_per_minute = 1});
  run(request(tight, "Once upon a time", 2));
  auto over = pipeline_->start(request(tight, "Once upon a time", 2), std::make_shared<RecordingSink>());
  ASSERT_TRUE(std::holds_alternative<NotStarted>(over));
  const boost::json::object d = metrics_.dashboard("tight");
  const boost::json::object& row = d.at("tenants").at(0).as_object();
  EXPECT_EQ(row.at("quota_refusals").at("requests").to_number<uint64_t>(), 1u);
  EXPECT_EQ(row.at("quota_refusals").at("tokens").to_number<uint64_t>(), 0u);
  EXPECT_EQ(row.at("requests").to_number<uint64_t>(), 1u) << "the refused request is not a request the engine ran";
  const std::string text = metrics_.exposition();
  EXPECT_NE(text.find("kvgate_quota_refusals_total{tenant=\"tight\",limit=\"requests\"} 1\n"), std::string::npos)
      << text;
}

TEST_F(PipelineTest, APinOverTheCacheQuotaIsRefusedBeforeAnyWorkAndOneThatFitsIsBilledAsAWrite) {
  const auto small = tenant("small", {.max_cached_kv_blocks = 2});
  expect_pin_refused(request(small, long_prompt_, 2), tenancy::Limit::kKvBlocks,  // more than two full blocks
                     "cache quota of 2 blocks");

  const auto roomy = tenant("roomy", {.max_cached_kv_blocks = 64});
  ServeRequest ok = request(roomy, long_prompt_, 2);
  ok.pins = {{static_cast<int32_t>(ok.prompt.size()), std::chrono::seconds(300)}};
  const Served s = run(ok);
  EXPECT_TRUE(s.pin_asked);
  EXPECT_FALSE(s.pin_refused);
  EXPECT_GT(s.pinned_tokens, 0u);
  EXPECT_GE(s.usage.cache_written, s.pinned_tokens) << "the pin is billed as a cache write";
  EXPECT_EQ(s.usage.cache_write_5m, s.pinned_tokens) << "nothing was cached before: every pinned token was written";
  EXPECT_EQ(s.usage.cache_write_1h, 0u);
  const std::optional<tenancy::LedgerRecord> rec = tenancy_->ledger().find(ok.request_id);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->tokens, s.usage) << "the ledger records each part";
  (void)engine_->available_blocks();  // a step boundary: the loop has published the pins by then
  EXPECT_EQ(engine_->pinned_blocks(tenant_label("roomy")) * 16, static_cast<int32_t>(s.pinned_tokens));
}

// A tenant's own pin quota (max_pinned_kv_blocks) replaces the server's
// default for it: one block is too few for this prompt's, a 429 naming the
// quota before any work.
TEST_F(PipelineTest, ATenantsOwnPinQuotaRefusesAPinPastItBeforeAnyWork) {
  const auto one = tenant("one-pin", {.max_pinned_kv_blocks = 1});
  expect_pin_refused(request(one, long_prompt_, 2), tenancy::Limit::kPinnedBlocks, "pin quota of 1 blocks");
}

}  // namespace
}  // namespace kvgate::serving
