// The Responses API's store: a tenant reads only its own responses, they
// expire by the retention limit (a ManualClock, never a sleep), the count
// quota drops the oldest, delete, reopening, and an unreadable record is a
// clear error.
#include "tenancy/response_store.h"

#include <gtest/gtest.h>

#include <rocksdb/write_batch.h>

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;
using std::chrono::hours;
using std::chrono::seconds;

constexpr int64_t kSecond = 1'000'000'000;

StoredResponse response(std::string id, int64_t created_ns, std::string previous = "") {
  return {id,
          std::move(previous),
          created_ns,
          "[{\"role\":\"user\",\"content\":\"hi " + id + "\"}]",
          "hello from " + id,
          "{\"id\":\"" + id + "\"}",
          std::string("\x07\0\0\0\x2a\0\0\0", 8)};
}

struct Fixture {
  TempDir dir;
  Store store{dir.path()};
  ManualClock clock{1'000 * kSecond};
};

TEST(ResponseStore, PutThenGetReturnsEveryField) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {});
  const StoredResponse r = response("resp_a", f.clock.now_ns(), "resp_prev");
  s.put("t1", r);
  EXPECT_EQ(s.get("t1", "resp_a"), r);
  EXPECT_FALSE(s.get("t1", "resp_unknown").has_value());
}

// A response stored before the output's ids were (format 1) reads back
// whole, without them.
TEST(ResponseStore, AFormatOneRecordReadsBackWithoutItsOutputIds) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {});
  StoredResponse r = response("resp_old", f.clock.now_ns());
  Encoder e(1);
  e.bytes(r.id).bytes(r.previous_id).i64(r.created_ns).bytes(r.input).bytes(r.output_text).bytes(r.object);
  rocksdb::WriteBatch b;
  ASSERT_TRUE(b.Put(f.store.cf(Family::kResponses), std::string("t1\0resp_old", 11), e.take()).ok());
  f.store.write(&b, true);
  r.output_tokens.clear();
  EXPECT_EQ(s.get("t1", "resp_old"), r);
}

TEST(ResponseStore, AnotherTenantsIdIsNotFound) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  EXPECT_FALSE(s.get("t2", "resp_a").has_value());
  EXPECT_FALSE(s.remove("t2", "resp_a"));
  EXPECT_TRUE(s.get("t1", "resp_a").has_value());  // t2's delete touched nothing
}

TEST(ResponseStore, ExpiresAfterTheRetention) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {.retention = hours(1), .per_tenant = 10});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  f.clock.advance_s(3600);
  EXPECT_TRUE(s.get("t1", "resp_a").has_value());  // exactly the retention: still kept
  f.clock.advance_s(1);
  EXPECT_FALSE(s.get("t1", "resp_a").has_value());
  EXPECT_FALSE(s.remove("t1", "resp_a"));
  // The next put drops its bytes.
  s.put("t1", response("resp_b", f.clock.now_ns()));
  EXPECT_FALSE(f.store.get(Family::kResponses, std::string("t1\0resp_a", 9)).has_value());
}

TEST(ResponseStore, PastTheQuotaTheOldestIsDropped) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {.retention = hours(24), .per_tenant = 2});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  f.clock.advance_s(1);
  s.put("t1", response("resp_b", f.clock.now_ns()));
  s.put("t2", response("resp_x", f.clock.now_ns()));  // another tenant's quota is its own
  f.clock.advance_s(1);
  s.put("t1", response("resp_c", f.clock.now_ns()));
  EXPECT_FALSE(s.get("t1", "resp_a").has_value());
  EXPECT_TRUE(s.get("t1", "resp_b").has_value());
  EXPECT_TRUE(s.get("t1", "resp_c").has_value());
  EXPECT_TRUE(s.get("t2", "resp_x").has_value());
}

TEST(ResponseStore, DeleteFreesItsPlaceInTheQuota) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {.retention = hours(24), .per_tenant = 2});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  f.clock.advance_s(1);
  s.put("t1", response("resp_b", f.clock.now_ns()));
  EXPECT_TRUE(s.remove("t1", "resp_b"));
  EXPECT_FALSE(s.get("t1", "resp_b").has_value());
  EXPECT_FALSE(s.remove("t1", "resp_b"));
  f.clock.advance_s(1);
  s.put("t1", response("resp_c", f.clock.now_ns()));
  EXPECT_TRUE(s.get("t1", "resp_a").has_value());  // two stored, none dropped
  EXPECT_TRUE(s.get("t1", "resp_c").has_value());
}

TEST(ResponseStore, TheQuotaCountsWhatAnEarlierRunStored) {
  TempDir dir;
  ManualClock clock(1'000 * kSecond);
  {
    Store store(dir.path());
    ResponseStore s(store, clock, {.retention = hours(24), .per_tenant = 2});
    s.put("t1", response("resp_a", clock.now_ns()));
    clock.advance_s(1);
    s.put("t1", response("resp_b", clock.now_ns()));
  }
  Store store(dir.path());
  ResponseStore s(store, clock, {.retention = hours(24), .per_tenant = 2});
  clock.advance_s(1);
  s.put("t1", response("resp_c", clock.now_ns()));
  EXPECT_FALSE(s.get("t1", "resp_a").has_value());
  EXPECT_TRUE(s.get("t1", "resp_b").has_value());
}

TEST(ResponseStore, AnIdIsStoredOnce) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  try {
    s.put("t1", response("resp_a", f.clock.now_ns()));
    FAIL() << "a second put of one id";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  }
}

TEST(ResponseStore, AnUnreadableRecordIsAClearErrorAndCanBeDeleted) {
  Fixture f;
  ResponseStore s(f.store, f.clock, {});
  s.put("t1", response("resp_a", f.clock.now_ns()));
  rocksdb::WriteBatch b;
  ASSERT_TRUE(b.Put(f.store.cf(Family::kResponses), std::string("t1\0resp_a", 9), "\x01garbage").ok());
  f.store.write(&b, true);
  try {
    (void)s.get("t1", "resp_a");
    FAIL() << "a corrupt record decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
  EXPECT_TRUE(s.remove("t1", "resp_a"));
  EXPECT_FALSE(s.get("t1", "resp_a").has_value());
}

TEST(ResponseStore, RefusesLimitsOfZero) {
  Fixture f;
  EXPECT_THROW(ResponseStore(f.store, f.clock, {.retention = seconds(0), .per_tenant = 1}), Error);
  EXPECT_THROW(ResponseStore(f.store, f.clock, {.retention = seconds(1), .per_tenant = 0}), Error);
}

}  // namespace
}  // namespace kvgate::tenancy
