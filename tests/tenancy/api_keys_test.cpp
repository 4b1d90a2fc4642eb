// API key lifecycle: create, authenticate, list, revoke, rotate; and the
// promise that no plaintext key ever reaches the store.
#include "tenancy/api_keys.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>

#include "tenancy/error.h"
#include "tenancy/tenancy.h"
#include "tests/temp_dir.h"

namespace kvgate::tenancy {
namespace {

using kvgate::testing::TempDir;

class ApiKeysTest : public ::testing::Test {
 protected:
  ApiKeysTest() : t_(std::make_unique<Tenancy>(dir_.path(), clock_)) { setup(); }
  void setup() {
    t_->tenants().put_plan(PricePlan::with_default_cached("std", 1, 1));
    for (const char* id : {"acme", "beta"}) {
      NewTenant n;
      n.id = id;
      n.plan_id = "std";
      t_->tenants().create(n);
    }
  }
  TempDir dir_;
  ManualClock clock_{1'700'000'000'000'000'000};
  std::unique_ptr<Tenancy> t_;
};

TEST_F(ApiKeysTest, KeysHaveTheDocumentedShapeAndAreUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const IssuedKey k = t_->keys().create("acme", "ci");
    EXPECT_EQ(k.plaintext.rfind("kvg-", 0), 0u);
    EXPECT_EQ(k.plaintext.size(), 4u + 43u);  // 32 bytes, unpadded base64url
    EXPECT_EQ(k.plaintext.find_first_of("+/="), std::string::npos);
    EXPECT_EQ(k.info.digest, key_digest(k.plaintext));
    EXPECT_TRUE(seen.insert(k.plaintext).second);
    EXPECT_TRUE(seen.insert(k.info.key_id).second);
  }
}

TEST_F(ApiKeysTest, AuthenticateFindsTheTenant) {
  const IssuedKey k = t_->keys().create("acme", "prod");
  const std::optional<Principal> p = t_->authenticate(k.plaintext);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->tenant.id, "acme");
  EXPECT_EQ(p->key_id, k.info.key_id);

  EXPECT_FALSE(t_->authenticate("").has_value());
  EXPECT_FALSE(t_->authenticate("kvg-").has_value());
  EXPECT_FALSE(t_->authenticate(k.plaintext.substr(0, k.plaintext.size() - 1)).has_value());
  std::string flipped = k.plaintext;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(t_->authenticate(flipped).has_value());
  EXPECT_FALSE(t_->authenticate("Bearer " + k.plaintext).has_value());
}

TEST_F(ApiKeysTest, RevokedKeyStopsWorkingAtOnce) {
  const IssuedKey keep = t_->keys().create("acme", "keep");
  const IssuedKey k = t_->keys().create("acme", "leaked");
  ASSERT_TRUE(t_->authenticate(k.plaintext));
  t_->keys().revoke("acme", k.info.key_id);
  EXPECT_FALSE(t_->authenticate(k.plaintext).has_value());
  EXPECT_TRUE(t_->authenticate(keep.plaintext).has_value()) << "other keys unaffected";
  t_->keys().revoke("acme", k.info.key_id);  // twice is harmless
  EXPECT_THROW(t_->keys().revoke("beta", k.info.key_id), Error) << "not beta's key";

  // Still revoked after a restart.
  t_.reset();
  t_ = std::make_unique<Tenancy>(dir_.path(), clock_);
  EXPECT_FALSE(t_->authenticate(k.plaintext).has_value());
  EXPECT_TRUE(t_->authenticate(keep.plaintext).has_value());
}

TEST_F(ApiKeysTest, RotatedKeyIsReplacedAtOnce) {
  const IssuedKey old = t_->keys().create("acme", "deploy");
  clock_.advance_s(10);
  const IssuedKey fresh = t_->keys().rotate("acme", old.info.key_id);
  EXPECT_FALSE(t_->authenticate(old.plaintext).has_value());
  const std::optional<Principal> p = t_->authenticate(fresh.plaintext);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->key_id, fresh.info.key_id);
  EXPECT_EQ(fresh.info.label, "deploy");
  EXPECT_NE(fresh.plaintext, old.plaintext);
  EXPECT_THROW(t_->keys().rotate("acme", old.info.key_id), Error) << "revoked keys do not rotate";

  const std::vector<ApiKeyInfo> keys = t_->keys().list("acme");
  ASSERT_EQ(keys.size(), 2u);
  for (const ApiKeyInfo& k : keys) {
    if (k.key_id == old.info.key_id) {
      EXPECT_FALSE(k.active());
      EXPECT_EQ(k.revoked_ns, clock_.now_ns());
      EXPECT_EQ(k.replaced_by, fresh.info.key_id);
    } else {
      EXPECT_TRUE(k.active());
    }
  }
  EXPECT_TRUE(t_->keys().list("beta").empty());
}

TEST_F(ApiKeysTest, SuspendedTenantCannotAuthenticate) {
  const IssuedKey k = t_->keys().create("acme", "");
  Tenant acme = t_->tenants().get("acme");
  acme.status = TenantStatus::kSuspended;
  t_->tenants().update(acme);
  EXPECT_FALSE(t_->authenticate(k.plaintext).has_value());
  acme.status = TenantStatus::kActive;
  t_->tenants().update(acme);
  EXPECT_TRUE(t_->authenticate(k.plaintext).has_value());
}

TEST_F(ApiKeysTest, UnknownTenantCannotGetKeys) {
  EXPECT_THROW(t_->keys().create("nobody", ""), Error);
}

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

TEST_F(ApiKeysTest, OnlyDigestsAtRest) {
  std::vector<IssuedKey> issued;
  for (int i = 0; i < 5; ++i) issued.push_back(t_->keys().create("acme", "k" + std::to_string(i)));
  issued.push_back(t_->keys().rotate("acme", issued[0].info.key_id));
  t_->keys().revoke("acme", issued[1].info.key_id);

  // Every key and value in every family, straight from RocksDB.
  size_t digests_seen = 0;
  for (int f = 0; f < static_cast<int>(Family::kCount); ++f) {
    std::unique_ptr<rocksdb::Iterator> it(t_->store().db()->NewIterator(
        rocksdb::ReadOptions(), t_->store().cf(static_cast<Family>(f))));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view k = it->key().ToStringView();
      const std::string_view v = it->value().ToStringView();
      for (const IssuedKey& key : issued) {
        const std::string body = key.plaintext.substr(4);
        EXPECT_FALSE(contains(k, body) || contains(v, body))
            << "plaintext key in family " << family_name(static_cast<Family>(f));
        digests_seen += contains(k, key.info.digest) || contains(v, key.info.digest);
      }
    }
    ASSERT_TRUE(it->status().ok());
  }
  EXPECT_GE(digests_seen, issued.size()) << "the digests, at least, are stored";

  // And nowhere in the files either (WAL, SSTs, logs), after a flush.
  ASSERT_TRUE(t_->store().db()->Flush(rocksdb::FlushOptions()).ok());
  for (int f = 0; f < static_cast<int>(Family::kCount); ++f) {
    ASSERT_TRUE(t_->store().db()->Flush(rocksdb::FlushOptions(), t_->store().cf(static_cast<Family>(f))).ok());
  }
  t_.reset();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const IssuedKey& key : issued) {
      EXPECT_FALSE(contains(bytes, key.plaintext.substr(4))) << entry.path();
    }
  }
}

}  // namespace
}  // namespace kvgate::tenancy
