// The ledger: validation, idempotence, durability across reopen, reports by
// UTC day, CSV export, and the whole seam (admit -> finish) end to end.
#include "tenancy/ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tenancy/error.h"
#include "tenancy/tenancy.h"
#include "tenancy/utc_calendar.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kDay = 86'400 * kSec;
constexpr int64_t kT0 = 1'700'006'400 * kSec;  // 2023-11-15T00:00:00Z

LedgerRecord rec(const std::string& id, int64_t finish_ns, const std::string& tenant = "acme") {
  LedgerRecord r;
  r.request_id = id;
  r.tenant_id = tenant;
  r.key_id = "key_0123456789abcdef";
  r.model = "llama-3-8b";
  r.arrival_ns = finish_ns - 3 * kSec;
  r.first_token_ns = finish_ns - 2 * kSec;
  r.finish_ns = finish_ns;
  r.tokens.cached_device = 64;
  r.tokens.cached_host = 32;
  r.tokens.cached_disk = 16;
  r.tokens.fresh_prefill = 8;
  r.tokens.prompt_tokens = 120;
  r.tokens.cache_written = 16;
  r.tokens.output_tokens = 10;
  r.finish_reason = FinishReason::kStop;
  r.cost_micros = 42;
  return r;
}

class LedgerTest : public ::testing::Test {
 protected:
  TempDir dir_;
  std::unique_ptr<Store> store_ = std::make_unique<Store>(dir_.path());
  std::unique_ptr<Ledger> ledger_ = std::make_unique<Ledger>(*store_);

  void reopen() {
    ledger_.reset();
    store_.reset();
    store_ = std::make_unique<Store>(dir_.path());
    ledger_ = std::make_unique<Ledger>(*store_);
  }
};

TEST_F(LedgerTest, RecordsAndFindsAcrossReopen) {
  const LedgerRecord r = rec("req-1", kT0 + 5 * kSec);
  EXPECT_EQ(ledger_->record(r), RecordOutcome::kRecorded);
  EXPECT_EQ(ledger_->find("req-1"), r);
  EXPECT_FALSE(ledger_->find("req-2").has_value());
  reopen();
  EXPECT_EQ(ledger_->find("req-1"), r);
}

TEST_F(LedgerTest, SecondRecordWithTheSameIdIsNotRewritten) {
  const LedgerRecord first = rec("req-1", kT0 + 5 * kSec);
  ASSERT_EQ(ledger_->record(first), RecordOutcome::kRecorded);
  LedgerRecord second = first;
  second.cost_micros = 999'999;
  second.finish_ns += kSec;  // would land under a different time key
  second.arrival_ns += kSec;
  EXPECT_EQ(ledger_->record(second), RecordOutcome::kAlreadyRecorded);
  EXPECT_EQ(ledger_->record(first), RecordOutcome::kAlreadyRecorded);
  EXPECT_EQ(ledger_->find("req-1"), first);
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX).requests, 1u);
  reopen();
  EXPECT_EQ(ledger_->record(second), RecordOutcome::kAlreadyRecorded);
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX).requests, 1u);
}

TEST_F(LedgerTest, ConcurrentDuplicatesAreRecordedExactlyOnce) {
  constexpr int kThreads = 8;
  constexpr int kIds = 200;
  std::atomic<int> recorded{0};
  std::atomic<int> already{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIds; ++i) {
        const RecordOutcome o = ledger_->record(rec("dup-" + std::to_string(i), kT0 + i));
        (o == RecordOutcome::kRecorded ? recorded : already).fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(recorded.load(), kIds);
  EXPECT_EQ(already.load(), kIds * (kThreads - 1));
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX).requests, static_cast<uint64_t>(kIds));
  const GroupCommitStats s = ledger_->stats();
  EXPECT_EQ(s.records, static_cast<uint64_t>(kIds));
  EXPECT_LE(s.commits, s.records);
}

TEST_F(LedgerTest, RejectsARecordWhosePromptSplitDoesNotAddUp) {
  LedgerRecord r = rec("bad-1", kT0);
  r.tokens.prompt_tokens = 121;
  try {
    ledger_->record(r);
    FAIL() << "recorded an inconsistent record";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvariantViolated);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bad-1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("121"), std::string::npos) << msg;
    EXPECT_NE(msg.find("64 + 32 + 16 + 8"), std::string::npos) << msg;
  }
  // Parts that wrap around to the prompt count are rejected too.
  LedgerRecord wrap = rec("bad-2", kT0);
  wrap.tokens.cached_device = UINT64_MAX;
  wrap.tokens.cached_host = 121;  // UINT64_MAX + 121 + 16 + 8 wraps to 144
  wrap.tokens.prompt_tokens = 144;
  EXPECT_THROW(ledger_->record(wrap), Error);
  EXPECT_FALSE(ledger_->find("bad-1").has_value());
  EXPECT_FALSE(ledger_->find("bad-2").has_value());
}

TEST_F(LedgerTest, RejectsBadTimestampsAndIds) {
  LedgerRecord r = rec("t-1", kT0);
  r.first_token_ns = r.finish_ns + 1;
  EXPECT_THROW(ledger_->record(r), Error);
  r = rec("t-2", kT0);
  r.arrival_ns = r.finish_ns + 1;
  r.first_token_ns = 0;
  EXPECT_THROW(ledger_->record(r), Error);
  r = rec("t-neg", 2 * kSec);
  r.arrival_ns = -kSec;  // before the epoch: no clock gives that
  EXPECT_THROW(ledger_->record(r), Error);
  r = rec("t-3", kT0);
  r.first_token_ns = 0;  // ended before the first token: fine
  EXPECT_EQ(ledger_->record(r), RecordOutcome::kRecorded);
  EXPECT_THROW(ledger_->record(rec("", kT0)), Error);
  EXPECT_THROW(ledger_->record(rec("x", kT0, "bad tenant")), Error);
}

TEST_F(LedgerTest, UsageByTenantRangeAndUtcDay) {
  // Day 0: two requests; day 1: one, plus one just before midnight of day 1.
  ledger_->record(rec("a", kT0 + 10 * kSec));
  ledger_->record(rec("b", kT0 + kDay - 1));
  ledger_->record(rec("c", kT0 + kDay));
  ledger_->record(rec("d", kT0 + 2 * kDay - 1));
  ledger_->record(rec("e", kT0 + 3 * kDay + 1));
  ledger_->record(rec("other", kT0 + 10 * kSec, "beta"));

  const UsageTotals all = ledger_->usage("acme", kT0, kT0 + 4 * kDay);
  EXPECT_EQ(all.requests, 5u);
  EXPECT_EQ(all.tokens.prompt_tokens, 5u * 120u);
  EXPECT_EQ(all.tokens.cached_device, 5u * 64u);
  EXPECT_EQ(all.tokens.fresh_prefill, 5u * 8u);
  EXPECT_EQ(all.cost_micros, 5u * 42u);
  // Half-open: [kT0 + kDay, kT0 + 2 kDay) holds c and d.
  EXPECT_EQ(ledger_->usage("acme", kT0 + kDay, kT0 + 2 * kDay).requests, 2u);
  EXPECT_EQ(ledger_->usage("acme", kT0 + kDay + 1, kT0 + 2 * kDay - 1).requests, 0u);
  EXPECT_EQ(ledger_->usage("beta", 0, INT64_MAX).requests, 1u);
  EXPECT_EQ(ledger_->usage("acm", 0, INT64_MAX).requests, 0u) << "no prefix bleed";

  const std::vector<DailyUsage> days = ledger_->usage_by_day("acme", kT0, kT0 + 4 * kDay);
  ASSERT_EQ(days.size(), 3u);
  EXPECT_EQ(days[0].date, "2023-11-15");
  EXPECT_EQ(days[0].totals.requests, 2u);
  EXPECT_EQ(days[1].date, "2023-11-16");
  EXPECT_EQ(days[1].totals.requests, 2u);
  EXPECT_EQ(days[2].date, "2023-11-18");
  EXPECT_EQ(days[2].totals.cost_micros, 42u);
}

TEST_F(LedgerTest, ExportsCsvWithAHeader) {
  LedgerRecord r = rec("req,\"1\"", kT0 + kSec);
  r.finish_reason = FinishReason::kLength;
  ledger_->record(r);
  ledger_->record(rec("req-2", kT0 + 2 * kSec));
  std::ostringstream out;
  ledger_->export_csv("acme", 0, INT64_MAX, out);
  std::istringstream in(out.str());
  std::string header, row1, row2, extra;
  std::getline(in, header);
  std::getline(in, row1);
  std::getline(in, row2);
  EXPECT_FALSE(std::getline(in, extra));
  EXPECT_EQ(header,
            "request_id,tenant_id,key_id,model,arrival_ns,first_token_ns,finish_ns,prompt_tokens,"
            "cached_device,cached_host,cached_disk,fresh_prefill,cache_written,cache_write_5m,cache_write_1h,output_tokens,"
            "finish_reason,cost_micros");
  EXPECT_EQ(row1, "\"req,\"\"1\"\"\",acme,key_0123456789abcdef,llama-3-8b," +
                      std::to_string(kT0 - 2 * kSec) + "," + std::to_string(kT0 - kSec) + "," +
                      std::to_string(kT0 + kSec) + ",120,64,32,16,8,16,0,0,10,length,42");
  EXPECT_EQ(row2.rfind("req-2,", 0), 0u);

  std::ostringstream empty;
  ledger_->export_csv("nobody", 0, INT64_MAX, empty);
  EXPECT_EQ(empty.str(), header + "\n");
}

TEST(TenancySeam, AdmitFinishBillsByTheAdmissionPlanAndRecordsOnce) {
  TempDir dir;
  ManualClock clock{kT0};
  Tenancy t(dir.path(), clock);
  t.tenants().put_plan(PricePlan::with_default_cached("std", 1'000'000, 2'000'000));
  NewTenant n;
  n.id = "acme";
  n.plan_id = "std";
  n.quotas.max_concurrent_requests = 1;
  n.quotas.monthly_spend_cap_micros = 1'000'000;
  t.tenants().create(n);
  const IssuedKey key = t.keys().create("acme", "");
  const std::optional<Principal> who = t.authenticate(key.plaintext);
  ASSERT_TRUE(who.has_value());

  const Admission a = t.admit(who->tenant, {120, 10});
  ASSERT_TRUE(a.admitted());
  EXPECT_FALSE(t.admit(who->tenant, {1, 1}).admitted()) << "one at a time";
  // Prices change mid-request: the request is billed as admitted.
  t.tenants().put_plan(PricePlan::with_default_cached("std", 9'000'000, 9'000'000));

  LedgerRecord r = rec("req-1", kT0 + 5 * kSec);
  r.key_id = who->key_id;
  r.cost_micros = 0;  // filled in by finish()
  EXPECT_EQ(t.finish(a.ticket(), r), RecordOutcome::kRecorded);
  // 8 fresh x 1 + 112 cached x 0.1 + 10 out x 2 = 8 + 11.2 + 20 = 39.2 -> 39
  EXPECT_EQ(t.ledger().find("req-1")->cost_micros, 39u);
  EXPECT_EQ(t.quotas().in_flight("acme"), 0u);
  EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u);

  // A bad record is refused but its ticket's slot is still freed.
  const Admission b = t.admit(who->tenant, {120, 10});
  ASSERT_TRUE(b.admitted());
  LedgerRecord bad = rec("req-2", kT0 + 6 * kSec);
  bad.tokens.fresh_prefill = 0;
  EXPECT_THROW(t.finish(b.ticket(), bad), Error);
  EXPECT_EQ(t.quotas().in_flight("acme"), 0u);
  EXPECT_FALSE(t.ledger().find("req-2").has_value());
}

// The month's spend is what the ledger holds: a request counts against the
// cap only when its record is newly and durably written. A duplicate, or a
// record refused for any reason, must leave the cap where it was.
TEST(TenancySeam, OnlyNewlyRecordedRequestsCountTowardsTheSpendCap) {
  TempDir dir;
  ManualClock clock{kT0};
  NewTenant n;
  n.id = "acme";
  n.plan_id = "std";
  n.quotas.monthly_spend_cap_micros = 200;
  const int64_t month = utc_month_start_ns(kT0);
  const int64_t next_month = utc_next_month_start_ns(kT0);
  {
    Tenancy t(dir.path(), clock);
    t.tenants().put_plan(PricePlan::with_default_cached("std", 1'000'000, 2'000'000));
    t.tenants().create(n);
    const Tenant acme = t.tenants().get("acme");
    auto finish = [&](const LedgerRecord& r) {
      const Admission a = t.admit(acme, {8, 10});  // reserves 8 + 20 = 28
      EXPECT_TRUE(a.admitted()) << r.request_id;
      return t.finish(a.ticket(), r);
    };

    // 8 fresh x 1 + 112 cached x 0.1 + 10 out x 2 = 39.2 -> 39
    ASSERT_EQ(finish(rec("req-1", kT0 + kSec)), RecordOutcome::kRecorded);
    EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u);

    // The same request id again (a retried finish): nothing new is billed.
    EXPECT_EQ(finish(rec("req-1", kT0 + kSec)), RecordOutcome::kAlreadyRecorded);
    EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u) << "a duplicate was billed";

    // The ledger refuses a record whose prompt split does not add up.
    LedgerRecord bad_split = rec("req-2", kT0 + 2 * kSec);
    bad_split.tokens.fresh_prefill = 0;
    EXPECT_THROW(finish(bad_split), Error);
    EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u) << "a refused record was billed";

    // A record for another tenant than the ticket's is refused.
    EXPECT_THROW(finish(rec("req-3", kT0 + 3 * kSec, "beta")), Error);
    EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u) << "a foreign record was billed";

    // A cost too large to price is never recorded, so it is not spent either.
    LedgerRecord huge = rec("req-4", kT0 + 4 * kSec);
    huge.tokens.output_tokens = UINT64_MAX;
    EXPECT_THROW(finish(huge), Error);
    EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u) << "an unpriceable record was billed";

    EXPECT_EQ(t.quotas().in_flight("acme"), 0u) << "every ticket was settled";
    EXPECT_EQ(t.quotas().month_spend_micros("acme"),
              t.ledger().usage("acme", month, next_month).cost_micros)
        << "spend in memory and on the books agree";

    // Admission sees the true spend: 200 - 39 = 161 left, and not a micro more.
    const Admission exact = t.admit(acme, {1, 80});  // 1 + 160 = 161
    ASSERT_TRUE(exact.admitted()) << exact.refusal().message;
    const Admission over = t.admit(acme, {1, 0});
    ASSERT_FALSE(over.admitted());
    EXPECT_EQ(over.refusal().limit, Limit::kMonthlySpend);
    EXPECT_EQ(over.refusal().remaining, 0u);
  }
  // A restart reads the same spend back from the ledger.
  Tenancy t(dir.path(), clock);
  EXPECT_EQ(t.quotas().month_spend_micros("acme"), 39u);
}

TEST(TenancySeam, MonthlySpendSurvivesARestart) {
  TempDir dir;
  ManualClock clock{kT0};
  NewTenant n;
  n.id = "acme";
  n.plan_id = "std";
  n.quotas.monthly_spend_cap_micros = 50;
  {
    Tenancy t(dir.path(), clock);
    t.tenants().put_plan(PricePlan::with_default_cached("std", 1'000'000, 1'000'000));
    t.tenants().create(n);
    const Admission a = t.admit(t.tenants().get("acme"), {20, 20});
    ASSERT_TRUE(a.admitted());
    LedgerRecord r = rec("req-1", kT0 + kSec);  // 8 + 11.2 + 10 = 29.2 -> 29
    ASSERT_EQ(t.finish(a.ticket(), r), RecordOutcome::kRecorded);
  }
  Tenancy t(dir.path(), clock);
  const Admission a = t.admit(t.tenants().get("acme"), {11, 11});  // 22 > 50 - 29
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal().limit, Limit::kMonthlySpend);
  EXPECT_EQ(a.refusal().remaining, 21u);
  EXPECT_TRUE(t.admit(t.tenants().get("acme"), {10, 11}).admitted());
}

}  // namespace
}  // namespace kvgate::tenancy
