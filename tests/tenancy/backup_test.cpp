// A backup taken while the store serves: restored (opened where it was
// written, as an operator puts it in place of <data.dir>/tenancy), it is the
// store as of that moment: tenants, keys and plans, and every ledger record
// whole (both of its families) or not at all, even with writers running.
#include "tenancy/backup.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tenancy/error.h"
#include "tenancy/tenancy.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;

// Named apart from ledger_test.cpp's: the unity build compiles them together.
constexpr int64_t kBackupT0 = int64_t{1'700'006'400} * 1'000'000'000;

LedgerRecord backup_rec(int i) {
  LedgerRecord r;
  r.request_id = "req-" + std::to_string(i);
  r.tenant_id = "acme";
  r.key_id = "key_0123456789abcdef";
  r.model = "m";
  r.arrival_ns = kBackupT0 + i * int64_t{1'000'000'000};
  r.first_token_ns = r.arrival_ns + 1;
  r.finish_ns = r.arrival_ns + 2;
  r.tokens.fresh_prefill = 10;
  r.tokens.prompt_tokens = 10;
  r.tokens.output_tokens = 5;
  r.finish_reason = FinishReason::kStop;
  r.cost_micros = 7;
  return r;
}

TEST(Backup, RestoresTenantsKeysAndTheLedgerAsOfTheBackup) {
  TempDir dir;
  const std::string live = dir.sub("tenancy"), copy = dir.sub("backups/day1");
  std::string key;
  {
    Tenancy t(live);
    t.tenants().put_plan(PricePlan::with_default_cached("std", 1'000'000, 2'000'000));
    NewTenant n;
    n.id = "acme";
    n.plan_id = "std";
    t.tenants().create(n);
    key = t.keys().create("acme", "prod").plaintext;
    for (int i = 0; i < 10; ++i) ASSERT_EQ(t.ledger().record(backup_rec(i)), RecordOutcome::kRecorded);

    const BackupInfo info = backup_store(t.store(), copy + "/");  // a trailing slash names the same directory
    EXPECT_EQ(info.dir, copy);
    EXPECT_EQ(info.schema_version, Store::kSchemaVersion);
    EXPECT_GT(info.files, 0u);
    EXPECT_GT(info.bytes, 0u);
    // After the backup: in the live store only.
    ASSERT_EQ(t.ledger().record(backup_rec(10)), RecordOutcome::kRecorded);
    t.keys().create("acme", "later");
  }
  Tenancy restored(copy);
  const std::optional<Principal> who = restored.authenticate(key);
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->tenant.id, "acme");
  EXPECT_EQ(restored.tenants().find_plan("std")->fresh_input_per_mtok, 1'000'000u);
  EXPECT_EQ(restored.keys().list("acme").size(), 1u);
  const UsageTotals u = restored.ledger().usage("acme", 0, INT64_MAX);
  EXPECT_EQ(u.requests, 10u);
  EXPECT_EQ(u.cost_micros, 70u);
  EXPECT_TRUE(restored.ledger().find("req-9").has_value());
  EXPECT_FALSE(restored.ledger().find("req-10").has_value());
  // The restored store serves on: it records as the live one did.
  EXPECT_EQ(restored.ledger().record(backup_rec(10)), RecordOutcome::kRecorded);
}

// Records written while the backup is taken are in it whole or not at all:
// the by-id index and the by-time records agree.
TEST(Backup, IsConsistentWhileWritersRun) {
  TempDir dir;
  Tenancy t(dir.sub("tenancy"));
  constexpr int kWriters = 4, kEach = 200;
  std::atomic<int> written{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&t, &written, w] {
      for (int i = 0; i < kEach; ++i) {
        t.ledger().record(backup_rec(w * kEach + i));
        written.fetch_add(1);
      }
    });
  while (written.load() < kWriters * kEach / 4) std::this_thread::yield();
  backup_store(t.store(), dir.sub("copy"));
  for (std::thread& th : writers) th.join();

  Tenancy restored(dir.sub("copy"));
  uint64_t found = 0;
  for (int i = 0; i < kWriters * kEach; ++i) found += restored.ledger().find(backup_rec(i).request_id).has_value();
  EXPECT_GT(found, 0u);
  EXPECT_EQ(restored.ledger().usage("acme", 0, INT64_MAX).requests, found);
}

TEST(Backup, RefusesAnExistingDirectory) {
  TempDir dir;
  Store s(dir.sub("tenancy"));
  std::filesystem::create_directories(dir.sub("taken"));
  try {
    backup_store(s, dir.sub("taken"));
    FAIL() << "wrote into an existing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
    EXPECT_NE(std::string(e.what()).find(dir.sub("taken")), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.sub("taken")));
}

}  // namespace
}  // namespace kvgate::tenancy
