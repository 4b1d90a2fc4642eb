// The store: schema versioning, reopening, tenants, plans, cache scopes and
// the record encoding's refusal of corrupt bytes.
#include "tenancy/store.h"

#include <gtest/gtest.h>

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tenancy/tenant_registry.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;

TEST(Store, CreatesThenReopens) {
  TempDir dir;
  {
    Store s(dir.path());
    rocksdb::WriteBatch b;
    ASSERT_TRUE(b.Put(s.cf(Family::kPlans), "k", "v").ok());
    s.write(&b, true);
  }
  Store s(dir.path());
  EXPECT_EQ(s.get(Family::kPlans, "k"), "v");
  EXPECT_FALSE(s.get(Family::kPlans, "missing").has_value());
}

TEST(Store, NewerSchemaIsAClearError) {
  TempDir dir;
  {
    Store s(dir.path());
    rocksdb::WriteBatch b;
    Encoder e(0);
    e.u32(Store::kSchemaVersion + 1);
    ASSERT_TRUE(b.Put(s.cf(Family::kMeta), std::string(Store::kSchemaKey), e.take()).ok());
    // A newer schema may also have added a family this build does not know.
    rocksdb::ColumnFamilyHandle* extra = nullptr;
    ASSERT_TRUE(s.db()->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "from_the_future", &extra).ok());
    ASSERT_TRUE(s.db()->DestroyColumnFamilyHandle(extra).ok());
    s.write(&b, true);
  }
  try {
    Store s(dir.path());
    FAIL() << "opened a store with a newer schema";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kSchemaTooNew);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("schema version " + std::to_string(Store::kSchemaVersion + 1)),
              std::string::npos) << msg;
    EXPECT_NE(msg.find(dir.path()), std::string::npos) << msg;
  }
}

TEST(Store, DecoderRejectsTruncatedTrailingAndForeignFormats) {
  const std::string good = Encoder(7).u64(42).bytes("abc").take();
  {
    Decoder d(good, 7, "thing");
    EXPECT_EQ(d.u64(), 42u);
    EXPECT_EQ(d.bytes(), "abc");
    d.finish();
  }
  EXPECT_THROW(Decoder(good, 8, "thing"), Error);
  const std::string truncated = good.substr(0, good.size() - 1);
  const std::string trailing = good + "x";
  {
    Decoder d(truncated, 7, "thing");
    d.u64();
    EXPECT_THROW(d.bytes(), Error);
  }
  {
    Decoder d(trailing, 7, "thing");
    d.u64();
    d.bytes();
    EXPECT_THROW(d.finish(), Error);
  }
}

class Tenants : public ::testing::Test {
 protected:
  Tenants() : store_(dir_.path()), reg_(store_, clock_) {
    reg_.put_plan(PricePlan::with_default_cached("std", 3'000'000, 15'000'000));
  }
  NewTenant spec(const std::string& id, const std::string& org = "", bool share = false) {
    NewTenant n;
    n.id = id;
    n.name = "Tenant " + id;
    n.org_id = org;
    n.share_org_scope = share;
    n.plan_id = "std";
    n.quotas.requests_per_minute = 60;
    return n;
  }
  TempDir dir_;
  ManualClock clock_{1'700'000'000'000'000'000};
  Store store_;
  TenantRegistry reg_;
};

TEST_F(Tenants, CreateFindUpdateList) {
  const Tenant a = reg_.create(spec("acme"));
  EXPECT_EQ(a.created_ns, clock_.now_ns());
  EXPECT_EQ(a.own_scope.size(), kScopeBytes);
  EXPECT_EQ(reg_.get("acme"), a);
  EXPECT_FALSE(reg_.find("nobody").has_value());
  EXPECT_THROW(reg_.get("nobody"), Error);

  Tenant changed = a;
  changed.status = TenantStatus::kSuspended;
  changed.quotas.tokens_per_minute = 1000;
  changed.own_scope = "attempt to change the scope";
  const Tenant stored = reg_.update(changed);
  EXPECT_EQ(stored.status, TenantStatus::kSuspended);
  EXPECT_EQ(stored.quotas.tokens_per_minute, 1000u);
  EXPECT_EQ(stored.own_scope, a.own_scope) << "a tenant's cache scope never changes";
  reg_.create(spec("beta"));
  EXPECT_EQ(reg_.list().size(), 2u);
}

TEST_F(Tenants, RejectsDuplicatesBadIdsAndUnknownPlans) {
  reg_.create(spec("acme"));
  try {
    reg_.create(spec("acme"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  }
  EXPECT_THROW(reg_.create(spec("has space")), Error);
  EXPECT_THROW(reg_.create(spec(std::string("nul\0id", 6))), Error);
  EXPECT_THROW(reg_.create(spec("")), Error);
  NewTenant bad = spec("gamma");
  bad.plan_id = "gold";
  try {
    reg_.create(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("gold"), std::string::npos);
  }
  EXPECT_THROW(reg_.create(spec("delta", "", /*share=*/true)), Error) << "sharing needs an org";
}

TEST_F(Tenants, CacheScopesArePrivateUnlessTheOrgShares) {
  const Tenant a = reg_.create(spec("a", "org1", true));
  const Tenant b = reg_.create(spec("b", "org1", true));
  const Tenant c = reg_.create(spec("c", "org1", false));
  const Tenant d = reg_.create(spec("d", "org2", true));
  const Tenant e = reg_.create(spec("e"));
  EXPECT_EQ(reg_.cache_scope(a), reg_.cache_scope(b));
  EXPECT_NE(reg_.cache_scope(a), reg_.cache_scope(c));
  EXPECT_NE(reg_.cache_scope(a), reg_.cache_scope(d));
  EXPECT_EQ(reg_.cache_scope(c), c.own_scope);
  EXPECT_EQ(reg_.cache_scope(e), e.own_scope);
  EXPECT_NE(reg_.cache_scope(c), reg_.cache_scope(e));
  EXPECT_EQ(reg_.cache_scope(a).size(), kScopeBytes);
}

TEST_F(Tenants, PlansRoundTrip) {
  const PricePlan p{"gold", 1, 2, 3, 4};
  reg_.put_plan(p);
  EXPECT_EQ(reg_.get_plan("gold"), p);
  EXPECT_EQ(reg_.list_plans().size(), 2u);
  EXPECT_THROW(reg_.get_plan("silver"), Error);
}

}  // namespace
}  // namespace kvgate::tenancy
