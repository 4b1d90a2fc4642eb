// The pieces the request pipeline stands on: the tenant's identity for the
// cache, the bill read off the engine's result, the first-start secrets.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <future>
#include <string>

#include "base/error.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/billed_usage.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/bootstrap.h"
#include "gateway/serving/tenant_identity.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

using kvgate::testing::TempDir;

TEST(TenantIdentity, ScopeIsTheSecretLittleEndianAndTheLabelOnlyTheId) {
  const std::string bytes("\x01\x02\x03\x04\x05\x06\x07\x08\x11\x12\x13\x14\x15\x16\x17\x18", 16);
  const cache::ScopeId s = scope_from_bytes(bytes);
  EXPECT_EQ(s.lo, 0x0807060504030201ull);
  EXPECT_EQ(s.hi, 0x1817161514131211ull);
  EXPECT_THROW(scope_from_bytes("short"), std::invalid_argument);
  EXPECT_EQ(tenant_label("acme"), tenant_label("acme"));
  EXPECT_NE(tenant_label("acme"), tenant_label("acme2"));
}

TEST(TenantIdentity, APromptCacheKeyPlacesOnlyItsOwnTenantsRequests) {
  const cache::ScopeId a{1, 2}, b{3, 4};
  EXPECT_EQ(placement_key(a, ""), 0u);  // no key: no hint
  EXPECT_NE(placement_key(a, "k"), 0u);
  EXPECT_EQ(placement_key(a, "k"), placement_key(a, "k"));
  EXPECT_NE(placement_key(a, "k"), placement_key(a, "k2"));
  EXPECT_NE(placement_key(a, "k"), placement_key(b, "k"));  // another tenant's equal key is another key
}

TEST(TenantIdentity, TenantsGetTheirOwnScopeUnlessTheyShareTheirOrgs) {
  TempDir dir;
  tenancy::Tenancy t(dir.sub("store"));
  t.tenants().put_plan(tenancy::PricePlan::with_default_cached("p", 100, 200));
  auto make = [&](const char* id, const char* org, bool share) {
    tenancy::NewTenant n;
    n.id = id, n.org_id = org, n.share_org_scope = share, n.plan_id = "p";
    return t.tenants().create(n);
  };
  const auto a = tenant_identity(t.tenants(), make("a", "org", true));
  const auto b = tenant_identity(t.tenants(), make("b", "org", true));
  const auto c = tenant_identity(t.tenants(), make("c", "org", false));
  EXPECT_EQ(a.scope, b.scope);  // the operator configured them to share
  EXPECT_NE(a.scope, c.scope);
  EXPECT_NE(a.label, b.label);  // still counted apart
}

TEST(BilledUsage, TheLedgerRecordIsTheEngineResultToTheToken) {
  RequestResult r;
  r.prompt_tokens = 100;
  r.cached_tokens = 64;
  r.cached_device_tokens = 32, r.cached_host_tokens = 16, r.cached_disk_tokens = 16;  // split by the scheduler
  r.fresh_prefill_tokens = 36;
  r.cache_written_tokens = 32;
  r.output = {1, 2, 3};
  r.finish = FinishReason::kLength;
  RequestTiming t;
  const WallAnchor clock = WallAnchor::now();
  t.arrival = clock.steady;
  t.first_token = clock.steady + std::chrono::milliseconds(5);
  t.token_times = {t.first_token};
  t.finished = clock.steady + std::chrono::milliseconds(9);
  t.admitted_step = 1;
  const tenancy::LedgerRecord rec =
      ledger_record({"req-1", "acme", "key_1", "m"}, token_usage(r, {}, 16), r.finish, t, clock);
  EXPECT_EQ(rec.tokens.prompt_tokens, 100u);
  EXPECT_EQ(rec.tokens.cached(), 64u);
  EXPECT_EQ(rec.tokens.cached_device, 32u);
  EXPECT_EQ(rec.tokens.cached_host, 16u);
  EXPECT_EQ(rec.tokens.cached_disk, 16u);
  EXPECT_EQ(rec.tokens.fresh_prefill, 36u);
  EXPECT_EQ(rec.tokens.cache_written, 32u);
  EXPECT_EQ(rec.tokens.output_tokens, 3u);
  EXPECT_EQ(rec.finish_reason, tenancy::FinishReason::kLength);
  EXPECT_EQ(rec.first_token_ns - rec.arrival_ns, 5'000'000);
  EXPECT_EQ(rec.finish_ns - rec.arrival_ns, 9'000'000);
  EXPECT_NO_THROW(tenancy::validate(rec));
  EXPECT_TRUE(consumed_work(t));
  EXPECT_FALSE(consumed_work(RequestTiming{}));
}

// Pinned writes: the fresh full blocks inside a pin's span, by the longest
// ttl that covers them; what was read from the cache is never a write.
TEST(BilledUsage, PinnedWritesAreTheFreshBlocksOfEachSpanByItsLongestTtl) {
  using std::chrono::seconds;
  RequestResult r;
  r.prompt_tokens = 100;
  r.fresh_prefill_tokens = 100;
  r.pinned_tokens = 96;
  const std::vector<PinSpan> pins = {{40, seconds(3600)}, {100, seconds(300)}};
  tenancy::TokenUsage u = token_usage(r, pins, 16);
  EXPECT_EQ(u.cache_write_1h, 32u) << "two full blocks in the hour's span";
  EXPECT_EQ(u.cache_write_5m, 64u) << "four more in the five minutes' span";

  r.cached_tokens = r.cached_device_tokens = 32;  // the hour's blocks were a hit
  r.fresh_prefill_tokens = 68;
  u = token_usage(r, pins, 16);
  EXPECT_EQ(u.cache_write_1h, 0u);
  EXPECT_EQ(u.cache_write_5m, 64u);
  EXPECT_NO_THROW(tenancy::check_prompt_split(u));

  r.cached_tokens = r.cached_device_tokens = 80;  // a longer hit leaves one block to write
  r.fresh_prefill_tokens = 20;
  EXPECT_EQ(token_usage(r, pins, 16).cache_write_5m, 16u);

  RequestResult whole;  // every block a hit; the last token run again
  whole.prompt_tokens = 96;
  whole.cached_tokens = whole.cached_device_tokens = 95;
  whole.fresh_prefill_tokens = 1;
  whole.pinned_tokens = 96;
  const tenancy::TokenUsage w = token_usage(whole, std::vector<PinSpan>{{96, seconds(300)}}, 16);
  EXPECT_EQ(w.cache_write_5m + w.cache_write_1h, 0u) << "a whole-prompt hit writes nothing";

  r.pinned_tokens = 0;  // the engine refused the pin
  r.pin_refused = true;
  u = token_usage(r, pins, 16);
  EXPECT_EQ(u.cache_write_5m + u.cache_write_1h, 0u) << "a refused pin bills no write";
}

// A bounded pool refuses past its queue, never blocks the poster, and runs
// every job it took, also the ones still queued when it is destroyed.
TEST(BlockingPool, PastItsCapacityTryPostRefusesAndEveryTakenJobRuns) {
  std::atomic<int> ran{0};
  std::promise<void> release, running;
  std::shared_future<void> gate = release.get_future().share();
  {
    BlockingPool pool(1, 2);
    pool.post([&, gate] {
      running.set_value();
      gate.wait();
      ++ran;
    });
    running.get_future().wait();  // the one thread is busy: what follows queues
    EXPECT_TRUE(pool.try_post([&] { ++ran; }));
    EXPECT_TRUE(pool.try_post([&] { ++ran; }));
    EXPECT_FALSE(pool.try_post([&] { ++ran; })) << "two queued is the bound";
    pool.post([&] { ++ran; });  // post() is for work that may not be refused
    release.set_value();
  }
  EXPECT_EQ(ran.load(), 4);
}

TEST(Bootstrap, FirstStartMakesTheDemoTenantAndAdminTokenOnceAndKeepsOnlyDigests) {
  TempDir dir;
  std::string key, admin;
  {
    tenancy::Tenancy t(dir.sub("store"));
    const FirstStartSecrets s = bootstrap(t, dir.sub("admin-token"));
    ASSERT_TRUE(s.demo_key && s.admin_token);
    key = *s.demo_key, admin = *s.admin_token;
    const auto who = t.authenticate(key);
    ASSERT_TRUE(who);
    EXPECT_EQ(who->tenant.id, kDemoTenant);
  }
  tenancy::Tenancy t(dir.sub("store"));
  const FirstStartSecrets again = bootstrap(t, dir.sub("admin-token"));
  EXPECT_FALSE(again.demo_key);
  EXPECT_FALSE(again.admin_token);
  EXPECT_TRUE(t.authenticate(key));
  const auto token = AdminToken::load(dir.sub("admin-token"));
  ASSERT_TRUE(token);
  EXPECT_TRUE(token->matches(admin));
  EXPECT_FALSE(token->matches(key));  // a tenant key is never an admin token
  EXPECT_FALSE(token->matches(admin.substr(0, admin.size() - 1) + "x"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.sub("admin-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream f(dir.sub("admin-token"));
  std::string stored((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(stored.find(admin.substr(5)), std::string::npos) << "the plaintext token is on disk";
}

TEST(AdminToken, ACorruptTokenFileIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.sub("admin_token.sha256");
  std::ofstream(path) << "not hex\n";
  try {
    AdminToken::load(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

}  // namespace
}  // namespace kvgate::serving
