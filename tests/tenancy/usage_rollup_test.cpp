// The per-hour usage rollups: every report over any period equals the sum
// of its records; a version-1 store is migrated at open; a corrupted rollup
// is summed again from its records, never trusted.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tenancy/ledger.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;

constexpr int64_t kOneSec = 1'000'000'000;
constexpr int64_t kDay0 = 1'700'006'400 * kOneSec;  // 2023-11-15T00:00:00Z

LedgerRecord record_at(const std::string& id, const std::string& tenant, int64_t finish_ns, uint64_t n) {
  LedgerRecord r;
  r.request_id = id;
  r.tenant_id = tenant;
  r.key_id = "key_0123456789abcdef";
  r.model = "m";
  r.arrival_ns = finish_ns - kOneSec;
  r.finish_ns = finish_ns;
  r.tokens.cached_device = n;
  r.tokens.cached_disk = n / 2;
  r.tokens.fresh_prefill = n + 1;
  r.tokens.cache_write_1h = n % 3;
  r.tokens.prompt_tokens = n + n / 2 + n + 1;
  r.tokens.cache_written = n + 1;
  r.tokens.output_tokens = 7;
  r.finish_reason = FinishReason::kStop;
  r.cost_micros = 3 * n + 1;
  return r;
}

UsageTotals scanned(const Ledger& l, const std::string& tenant, int64_t from, int64_t to) {
  UsageTotals t;
  l.scan(tenant, from, to, [&](const LedgerRecord& r) { add_to_totals(&t, r); });
  return t;
}

class UsageRollups : public ::testing::Test {
 protected:
  TempDir dir_;
  std::unique_ptr<Store> store_ = std::make_unique<Store>(dir_.path());
  std::unique_ptr<Ledger> ledger_ = std::make_unique<Ledger>(*store_);

  // Three days of records for two tenants, from four threads at once so
  // that groups commit many records (and many to one hour) together.
  void fill(int per_thread) {
    std::vector<std::thread> threads;
    for (int th = 0; th < 4; ++th) {
      threads.emplace_back([this, th, per_thread] {
        std::mt19937_64 rng(static_cast<uint64_t>(th) + 1);
        for (int i = 0; i < per_thread; ++i) {
          const int64_t at = kDay0 + static_cast<int64_t>(rng() % (3 * 86'400)) * kOneSec + static_cast<int64_t>(rng() % kOneSec);
          const std::string tenant = rng() % 3 == 0 ? "beta" : "acme";
          ledger_->record(record_at("r" + std::to_string(th) + "-" + std::to_string(i), tenant, at, rng() % 1000));
        }
      });
    }
    for (auto& t : threads) t.join();
  }

  void reopen() {
    ledger_.reset();
    store_.reset();
    store_ = std::make_unique<Store>(dir_.path());
    ledger_ = std::make_unique<Ledger>(*store_);
  }
};

TEST_F(UsageRollups, EveryPeriodSumsExactlyItsRecords) {
  fill(150);
  EXPECT_GT(ledger_->stats().records, ledger_->stats().commits) << "some groups carried several records";
  std::mt19937_64 rng(7);
  const int64_t span = 4 * 86'400 * kOneSec;
  for (int i = 0; i < 300; ++i) {
    int64_t a = kDay0 - 3600 * kOneSec + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    int64_t b = kDay0 - 3600 * kOneSec + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    if (i % 3 == 0) a = a / kHourNs * kHourNs;  // aligned ends too
    if (i % 5 == 0) b = a + static_cast<int64_t>(rng() % (2 * 3600)) * kOneSec;  // within an hour or two
    if (a > b) std::swap(a, b);
    for (const std::string tenant : {"acme", "beta"})
      ASSERT_EQ(ledger_->usage(tenant, a, b), scanned(*ledger_, tenant, a, b)) << tenant << " [" << a << ", " << b << ")";
  }
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX), scanned(*ledger_, "acme", 0, INT64_MAX));
  EXPECT_EQ(ledger_->usage("acme", INT64_MIN, INT64_MAX), scanned(*ledger_, "acme", 0, INT64_MAX));
  EXPECT_EQ(ledger_->usage("nobody", 0, INT64_MAX).requests, 0u);
  reopen();
  EXPECT_EQ(ledger_->usage("beta", kDay0 + 5, kDay0 + 2 * kDayNs + 7), scanned(*ledger_, "beta", kDay0 + 5, kDay0 + 2 * kDayNs + 7));
}

TEST_F(UsageRollups, BucketsAreAlignedClippedAndCapped) {
  fill(50);
  const int64_t from = kDay0 + 90 * 60 * kOneSec + 3, to = kDay0 + 2 * kDayNs + 30 * 60 * kOneSec;
  const std::vector<UsageBucket> hours = ledger_->usage_buckets("acme", from, to, kHourNs, 1000);
  ASSERT_EQ(hours.size(), 48u);  // 01:00 of day 0 (clipped at 01:30) up to 00:00 of day 2 (clipped at 00:30)
  EXPECT_EQ(hours.front().start_ns, from);
  EXPECT_EQ(hours.front().end_ns, kDay0 + 2 * kHourNs);
  EXPECT_EQ(hours.back().start_ns, kDay0 + 2 * kDayNs);
  EXPECT_EQ(hours.back().end_ns, to);
  UsageTotals sum;
  for (size_t i = 0; i < hours.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(hours[i].start_ns, hours[i - 1].end_ns);
    }
    EXPECT_EQ(hours[i].totals, scanned(*ledger_, "acme", hours[i].start_ns, hours[i].end_ns)) << i;
    add_totals(&sum, hours[i].totals);
  }
  EXPECT_EQ(sum, ledger_->usage("acme", from, to));

  const std::vector<UsageBucket> days = ledger_->usage_buckets("acme", from, to, kDayNs, 2);
  ASSERT_EQ(days.size(), 2u) << "capped at max_buckets";
  EXPECT_EQ(days[0].start_ns, from);
  EXPECT_EQ(days[0].end_ns, kDay0 + kDayNs);
  EXPECT_EQ(days[1].totals, scanned(*ledger_, "acme", kDay0 + kDayNs, kDay0 + 2 * kDayNs));
  EXPECT_THROW(ledger_->usage_buckets("acme", from, to, kHourNs / 2, 10), Error);
}

// A store written before the rollups existed: its records alone, version 1.
TEST_F(UsageRollups, AVersionOneStoreIsMigratedAtOpen) {
  fill(40);
  const UsageTotals before = scanned(*ledger_, "acme", 0, INT64_MAX);
  ASSERT_GT(before.requests, 0u);
  {
    rocksdb::WriteBatch b;
    ASSERT_TRUE(b.DeleteRange(store_->cf(Family::kUsageByHour), std::string(1, '\0'), std::string(300, '\xff')).ok());
    Encoder e(0);
    e.u32(1);
    ASSERT_TRUE(b.Put(store_->cf(Family::kMeta), std::string(Store::kSchemaKey), e.take()).ok());
    store_->write(&b, true);
  }
  ledger_.reset();
  store_.reset();
  store_ = std::make_unique<Store>(dir_.path());
  EXPECT_EQ(store_->opened_version(), 1u);
  ledger_ = std::make_unique<Ledger>(*store_);
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX), before);
  EXPECT_EQ(ledger_->usage("acme", kDay0 + kDayNs, kDay0 + 2 * kDayNs), scanned(*ledger_, "acme", kDay0 + kDayNs, kDay0 + 2 * kDayNs));
  reopen();
  EXPECT_EQ(store_->opened_version(), Store::kSchemaVersion);
  ledger_->record(record_at("after", "acme", kDay0 + 60 * kOneSec, 5));
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX), scanned(*ledger_, "acme", 0, INT64_MAX));
}

TEST_F(UsageRollups, ACorruptedRollupIsSummedFromItsRecords) {
  for (int i = 0; i < 5; ++i) ledger_->record(record_at("c" + std::to_string(i), "acme", kDay0 + 3 * kHourNs + i * kOneSec, 10));
  const std::string key = ledger_time_key_prefix("acme", kDay0 + 3 * kHourNs);
  ASSERT_TRUE(store_->get(Family::kUsageByHour, key).has_value());
  rocksdb::WriteBatch b;
  ASSERT_TRUE(b.Put(store_->cf(Family::kUsageByHour), key, "\x01garbage").ok());
  store_->write(&b, true);
  const UsageTotals truth = scanned(*ledger_, "acme", 0, INT64_MAX);
  EXPECT_EQ(truth.requests, 5u);
  EXPECT_EQ(ledger_->usage("acme", 0, INT64_MAX), truth);
  // The next record into that hour writes the rollup whole again.
  ledger_->record(record_at("c5", "acme", kDay0 + 3 * kHourNs + 9 * kOneSec, 10));
  EXPECT_EQ(decode_usage_totals(*store_->get(Family::kUsageByHour, key)), scanned(*ledger_, "acme", 0, INT64_MAX));
}

}  // namespace
}  // namespace kvgate::tenancy
