// AdminApi, the /admin/ routes the admin CLI calls, called as the server
// calls them (a request and a Reply; the answer comes from a BlockingPool
// thread) over the real pipeline on stories260K: only the admin token opens
// them; each method and path pattern of the route table reaches its own
// handler; tenancy's errors are statuses in OpenAI's error shape; an
// operator's pin is run, billed and flushed; a backup opens as the store; a
// route front sends the cache routes to its replicas.
#include "gateway/admin/admin_api.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gateway/serving/tenant_identity.h"
#include "tests/gateway/admin/admin_fixture.h"
#include "tests/gateway/server/reply_recorder.h"
#include "tests/gateway/server/test_request.h"
#include "tests/gateway/serving/api_error_shape.h"
#include "tests/gateway/serving/full_pool.h"

namespace kvgate::admin {
namespace {

namespace json = boost::json;
using server::ReplyEvent;
using server::testing::header;
using server::testing::ReplyRecorder;
using server::testing::test_request;
using serving::testing::is_api_error;
using serving::testing::kModelId;

class AdminApiTest : public testing::AdminSuite<AdminApiTest> {
 protected:
  void SetUp() override {
    AdminSuite::SetUp();
    api_ = make_api(&*stack().engine_);
  }

  std::unique_ptr<AdminApi> make_api(Engine* engine) {
    serving::testing::PipelineStack& s = stack();
    return std::make_unique<AdminApi>(engine, *s.tenancy_, s.admin_, *token_, *s.pipeline_, *s.tokenizer_, kModelId,
                                      tiers_);
  }

  // Calls the admin API as the operator (or with `bearer`) and waits for its answer.
  ReplyEvent call(AdminApi& api, const std::string& method, const std::string& target, const std::string& body = {},
                  std::optional<std::string> bearer = admin_token_) {
    auto rec = std::make_shared<ReplyRecorder>();
    api(test_request(method, target, body, std::move(bearer)), server::Reply(rec, 1));
    const std::vector<ReplyEvent> ev = rec->wait();
    EXPECT_EQ(ev.size(), 1u) << method << " " << target;
    return ev.empty() ? ReplyEvent{} : ev.front();
  }
  ReplyEvent call(const std::string& method, const std::string& target, const std::string& body = {}) {
    return call(*api_, method, target, body);
  }
  // A successful call's JSON.
  json::value ok(const std::string& method, const std::string& target, const std::string& body = {}, int status = 200) {
    const ReplyEvent e = call(method, target, body);
    EXPECT_EQ(e.status, status) << method << " " << target << ": " << e.body;
    EXPECT_EQ(header(e, "content-type"), "application/json");
    boost::system::error_code ec;
    json::value v = json::parse(e.body, ec);
    return ec ? json::value() : v;
  }

  serving::KvTiers tiers_;  // none: the device pool alone
  std::unique_ptr<AdminApi> api_;
};

TEST_F(AdminApiTest, OnlyTheAdminTokenOpensTheRoutes) {
  const std::string not_the_token = "kvga-" + std::string(64, '0');
  for (const char* target : {"/admin/tenants", "/admin/cache", "/admin/no-such-route"}) {
    EXPECT_TRUE(
        is_api_error(call(*api_, "GET", target, {}, std::nullopt), 401, "authentication_error", "missing_admin_token"))
        << target;
    EXPECT_TRUE(is_api_error(call(*api_, "GET", target, {}, key_), 403, "permission_error", "permission_denied"))
        << "a tenant's key is no admin token: " << target;
    EXPECT_TRUE(
        is_api_error(call(*api_, "GET", target, {}, not_the_token), 403, "permission_error", "permission_denied"))
        << target;
  }
  const std::string intruder = tenant_id("intruder");
  EXPECT_EQ(call(*api_, "POST", "/admin/tenants", R"({"id":")" + intruder + R"("})", key_).status, 403);
  EXPECT_EQ(call("GET", "/admin/tenants/" + intruder).status, 404) << "a refused call changes nothing";
}

// The token is checked on the receiving thread before anything is queued,
// and a full admin queue sheds: with the pool's one thread held and its
// queue full, a call without the token is still refused at once, and the
// operator's next call is a 503 with retry-after, never a wait.
TEST_F(AdminApiTest, TheTokenIsCheckedBeforeQueueingAndAFullQueueSheds) {
  serving::testing::FullPool held;
  ASSERT_TRUE(held.full());
  serving::testing::PipelineStack& s = stack();
  AdminApi api(&*s.engine_, *s.tenancy_, held.pool(), *token_, *s.pipeline_, *s.tokenizer_, kModelId, tiers_);

  EXPECT_TRUE(is_api_error(call(api, "GET", "/admin/tenants", {}, std::nullopt), 401, "authentication_error",
                           "missing_admin_token"));
  EXPECT_TRUE(is_api_error(call(api, "GET", "/admin/tenants", {}, key_), 403, "permission_error", "permission_denied"));
  const ReplyEvent shed = call(api, "GET", "/admin/tenants");
  EXPECT_TRUE(is_api_error(shed, 503, "server_error", "overloaded"));
  EXPECT_EQ(header(shed, "retry-after"), "1");
  EXPECT_NE(shed.body.find("admin work queue is full"), std::string::npos) << shed.body;
}

// Every row of kRoutes, each answered by its own handler: what comes back
// is that handler's answer (or its own refusal), never the table's 404.
TEST_F(AdminApiTest, EachMethodAndPathPatternReachesItsOwnHandler) {
  const std::string t = tenant_id("new");
  const std::string base = "/admin/tenants/" + t;
  const json::value created =
      ok("POST", "/admin/tenants", R"({"id":")" + t + R"(","plan_id":"p","quotas":{"requests_per_minute":5}})", 201);
  EXPECT_EQ(created.at("id"), json::value(t));
  EXPECT_EQ(created.at("status"), "active");
  EXPECT_EQ(created.at("quotas").at("requests_per_minute"), 5);
  EXPECT_TRUE(created.as_object().contains("label"));
  EXPECT_FALSE(created.as_object().contains("scope")) << "the secret scope never leaves";

  bool listed = false;
  const json::value tenants = ok("GET", "/admin/tenants");
  for (const json::value& row : tenants.at("data").as_array()) listed |= row.at("id") == json::value(t);
  EXPECT_TRUE(listed);
  EXPECT_EQ(ok("GET", base).at("id"), json::value(t));
  const json::value patched = ok("PATCH", base, R"({"name":"Acme Inc","quotas":{"tokens_per_minute":900}})");
  EXPECT_EQ(patched.at("name"), "Acme Inc");
  EXPECT_EQ(patched.at("quotas").at("tokens_per_minute"), 900);
  EXPECT_EQ(patched.at("quotas").at("requests_per_minute"), 5) << "a quota not named is kept";

  const json::value issued = ok("POST", base + "/keys", R"({"label":"ci"})", 201);
  const std::string key_id(issued.at("key_id").as_string());
  EXPECT_EQ(issued.at("label"), "ci");
  const json::value keys = ok("GET", base + "/keys");
  ASSERT_EQ(keys.at("data").as_array().size(), 1u);
  EXPECT_EQ(keys.at("data").at(0).at("key_id"), json::value(key_id));
  const json::value rotated = ok("POST", base + "/keys/" + key_id + "/rotate", {}, 201);
  EXPECT_EQ(rotated.at("replaces"), json::value(key_id));
  const std::string successor(rotated.at("key_id").as_string());
  EXPECT_EQ(ok("DELETE", base + "/keys/" + successor),
            json::parse(R"({"key_id":")" + successor + R"(","revoked":true})"));

  const json::value usage = ok("GET", "/admin/usage?tenant=" + t);
  EXPECT_EQ(usage.at("tenant"), json::value(t));
  EXPECT_TRUE(usage.at("by_day").as_array().empty());
  bool plan_p = false;
  const json::value plans = ok("GET", "/admin/plans");
  for (const json::value& plan : plans.at("data").as_array()) plan_p |= plan.at("id") == "p";
  EXPECT_TRUE(plan_p);
  const std::string gold = tenant_id("gold");
  const json::value plan = ok("PUT", "/admin/plans/" + gold, R"({"fresh_input_per_mtok":100,"output_per_mtok":300})");
  EXPECT_EQ(plan.at("id"), json::value(gold));
  EXPECT_EQ(plan.at("cached_input_per_mtok"), 10) << "cached input defaults to 10% of fresh";
  const ReplyEvent no_record = call("GET", "/admin/requests/req_nothing");
  EXPECT_TRUE(is_api_error(no_record, 404, "not_found_error", "not_found"));
  EXPECT_NE(no_record.body.find("req_nothing"), std::string::npos);
  const std::string backup_dir = stack().dir_.sub("backup-" + t);
  EXPECT_EQ(ok("POST", "/admin/backup", json::serialize(json::object{{"dir", backup_dir}}), 201).at("dir"),
            json::value(backup_dir));

  EXPECT_EQ(ok("GET", "/admin/cache").at("blocks_total"), stack().engine_->num_blocks());
  EXPECT_EQ(ok("GET", "/admin/cache/tiers"), json::parse(R"({"tiers":[]})")) << "no host or disk tier";
  const ReplyEvent purge = call("POST", "/admin/cache/purge");
  EXPECT_TRUE(is_api_error(purge, 404, "not_found_error", "not_found"));
  EXPECT_NE(purge.body.find("no disk tier"), std::string::npos);
  const json::value policy = ok("GET", "/admin/policy");
  const json::value& device = policy.at("tiers").at(0);
  EXPECT_EQ(device.at("tier"), "device");
  const json::value same =
      ok("PUT", "/admin/policy/device", json::serialize(json::object{{"policy", device.at("policy")}}));
  EXPECT_EQ(same.at("tier"), "device");
  EXPECT_EQ(same.at("policy"), device.at("policy"));
  // A live change is lost at restart, and the answer says so and where to keep it.
  EXPECT_EQ(same.at("until_restart"), true);
  EXPECT_NE(json::value_to<std::string>(same.at("note")).find("[model] eviction_policy"), std::string::npos);
  const json::value evicted = ok("POST", base + "/cache/evict");
  EXPECT_EQ(evicted.at("tenant"), json::value(t));
  EXPECT_EQ(evicted.at("evicted_blocks"), 0);
  EXPECT_TRUE(is_api_error(call("POST", base + "/cache/pins", "{}"), 400, "invalid_request_error",
                           "missing_required_parameter", "prompt"));
}

// As on every other route (docs/gateway.md's error table): a path no row
// of the table has is 404, a path a row has with another method is 405.
TEST_F(AdminApiTest, AnUnknownPathIs404AndAKnownPathWithAnotherMethod405) {
  EXPECT_TRUE(is_api_error(call("GET", "/admin/nothing"), 404, "invalid_request_error", "unknown_url"));
  EXPECT_TRUE(is_api_error(call("GET", "/admin/tenants/" + id_ + "/nothing"), 404, "invalid_request_error",
                           "unknown_url"));
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"DELETE", "/admin/tenants"},
           {"PUT", "/admin/tenants/" + id_},
           {"GET", "/admin/tenants/" + id_ + "/keys/key_x"},
           {"POST", "/admin/usage"},
           {"GET", "/admin/cache/purge"},
           {"POST", "/admin/policy"},
           {"GET", "/admin/tenants/" + id_ + "/cache/pins"}}) {
    const ReplyEvent e = call(method, target);
    EXPECT_TRUE(is_api_error(e, 405, "invalid_request_error", "method_not_allowed")) << method << " " << target;
  }
  EXPECT_EQ(tenancy().tenants().get(id_).status, tenancy::TenantStatus::kActive) << "a refused call changes nothing";
  const ReplyEvent front = call(*make_api(nullptr), "DELETE", "/admin/cache");
  EXPECT_TRUE(is_api_error(front, 404, "not_found_error", "not_found")) << "a front has no cache routes at all";
}

TEST_F(AdminApiTest, AKeyIsShownOnceAndRevokingOrRotatingItTakesEffectAtOnce) {
  const std::string base = "/admin/tenants/" + id_ + "/keys";
  const json::value issued = ok("POST", base, R"({"label":"deploy"})", 201);
  const std::string first(issued.at("api_key").as_string());
  EXPECT_TRUE(first.starts_with("kvg-")) << first;
  ASSERT_TRUE(tenancy().authenticate(first));
  EXPECT_EQ(tenancy().authenticate(first)->tenant.id, id_);
  const ReplyEvent listed = call("GET", base);
  EXPECT_EQ(listed.body.find(first), std::string::npos) << "a key is shown once, never listed";
  EXPECT_EQ(listed.body.find("digest"), std::string::npos);

  const json::value rotated =
      ok("POST", base + "/" + std::string(issued.at("key_id").as_string()) + "/rotate", {}, 201);
  const std::string second(rotated.at("api_key").as_string());
  EXPECT_EQ(rotated.at("label"), "deploy") << "the successor keeps the label";
  EXPECT_FALSE(tenancy().authenticate(first)) << "the rotated key is revoked at once";
  ASSERT_TRUE(tenancy().authenticate(second));
  ok("DELETE", base + "/" + std::string(rotated.at("key_id").as_string()));
  EXPECT_FALSE(tenancy().authenticate(second)) << "a revoked key stops at once";
  EXPECT_TRUE(tenancy().authenticate(key_)) << "the tenant's other keys are untouched";
}

TEST_F(AdminApiTest, BadCallsAreStatusesInOpenAisErrorShapeNamingTheField) {
  const std::string base = "/admin/tenants/" + id_;
  EXPECT_TRUE(is_api_error(call("POST", "/admin/tenants", R"({"id":")" + id_ + R"(","plan_id":"p"})"), 409,
                           "invalid_request_error", "already_exists"));
  EXPECT_TRUE(is_api_error(call("GET", "/admin/tenants/nobody-here"), 404, "not_found_error", "not_found"));
  EXPECT_TRUE(is_api_error(call("POST", "/admin/tenants", R"({"name":"x"})"), 400, "invalid_request_error",
                           "missing_required_parameter", "id"));
  EXPECT_TRUE(is_api_error(call("POST", "/admin/tenants", R"({"id":"not an id!"})"), 400, "invalid_request_error",
                           std::nullopt));
  EXPECT_TRUE(is_api_error(call("POST", "/admin/tenants", "{"), 400, "invalid_request_error", "invalid_json"));
  EXPECT_TRUE(is_api_error(call("PATCH", base, R"({"status":"gone"})"), 400, "invalid_request_error", "invalid_value",
                           "status"));
  EXPECT_TRUE(is_api_error(call("PATCH", base, R"({"quotas":{"requests_per_minute":-1}})"), 400,
                           "invalid_request_error", "invalid_value", "quotas.requests_per_minute"));
  EXPECT_TRUE(
      is_api_error(call("PATCH", base, R"({"quotas":7})"), 400, "invalid_request_error", "invalid_type", "quotas"));
  EXPECT_EQ(tenancy().tenants().get(id_).status, tenancy::TenantStatus::kActive) << "a refused change changes nothing";

  EXPECT_TRUE(
      is_api_error(call("GET", "/admin/usage"), 400, "invalid_request_error", "missing_required_parameter", "tenant"));
  EXPECT_TRUE(is_api_error(call("GET", "/admin/usage?tenant=nobody-here"), 404, "not_found_error", "not_found"));
  EXPECT_TRUE(is_api_error(call("GET", "/admin/usage?tenant=" + id_ + "&format=xml"), 400, "invalid_request_error",
                           "invalid_value", "format"));
  EXPECT_TRUE(is_api_error(call("PUT", "/admin/plans/cheap", R"({"fresh_input_per_mtok":1})"), 400,
                           "invalid_request_error", "missing_required_parameter", "output_per_mtok"));
  EXPECT_TRUE(is_api_error(call("PUT", "/admin/policy/device", R"({"policy":"no-such-policy"})"), 400,
                           "invalid_request_error", std::nullopt, "policy"));
  EXPECT_TRUE(
      is_api_error(call("PUT", "/admin/policy/nvme", R"({"policy":"lru"})"), 404, "not_found_error", "not_found"));
  EXPECT_TRUE(is_api_error(call("POST", base + "/cache/pins", R"({"prompt":"Once","ttl_s":0})"), 400,
                           "invalid_request_error", "invalid_value", "ttl_s"));
  EXPECT_TRUE(is_api_error(call("POST", "/admin/tenants/nobody-here/cache/pins", R"({"prompt":"Once"})"), 404,
                           "not_found_error", "not_found"));
}

// A mistyped tenant id must not read as a tenant without keys: like its
// usage (/admin/usage), an unknown tenant's keys are 404.
TEST_F(AdminApiTest, TheKeysOfAnUnknownTenantAre404NotAnEmptyList) {
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/admin/tenants/nobody-here/keys"},
           {"POST", "/admin/tenants/nobody-here/keys"},
           {"DELETE", "/admin/tenants/nobody-here/keys/key_x"},
           {"POST", "/admin/tenants/nobody-here/keys/key_x/rotate"}}) {
    const ReplyEvent e = call(method, target);
    EXPECT_TRUE(is_api_error(e, 404, "not_found_error", "not_found")) << method << " " << target;
    EXPECT_NE(e.body.find("nobody-here"), std::string::npos) << e.body;
  }
  EXPECT_EQ(ok("GET", "/admin/tenants/" + id_ + "/keys").at("data").as_array().size(), 1u);
}

TEST_F(AdminApiTest, ARequestsRecordAndTheTenantsUsageAreWhatItWasBilled) {
  const std::string id = run_request(3);
  const auto billed = tenancy().ledger().find(id);
  ASSERT_TRUE(billed);
  const json::value rec = ok("GET", "/admin/requests/" + id);
  EXPECT_EQ(rec.at("request_id"), json::value(id));
  EXPECT_EQ(rec.at("tenant_id"), json::value(id_));
  EXPECT_EQ(rec.at("model"), kModelId);
  EXPECT_EQ(rec.at("finish_reason"), "length");
  EXPECT_EQ(rec.at("prompt_tokens").to_number<uint64_t>(), billed->tokens.prompt_tokens);
  EXPECT_EQ(rec.at("cached_tokens").to_number<uint64_t>() + rec.at("fresh_prefill_tokens").to_number<uint64_t>(),
            billed->tokens.prompt_tokens);
  EXPECT_EQ(rec.at("completion_tokens"), 3);
  EXPECT_EQ(rec.at("cost_micros").to_number<uint64_t>(), billed->cost_micros);

  const json::value usage = ok("GET", "/admin/usage?tenant=" + id_);
  EXPECT_EQ(usage.at("requests"), 1);
  EXPECT_EQ(usage.at("cost_micros").to_number<uint64_t>(), billed->cost_micros);
  ASSERT_EQ(usage.at("by_day").as_array().size(), 1u);
  EXPECT_EQ(usage.at("by_day").at(0).at("requests"), 1);
  const ReplyEvent csv = call("GET", "/admin/usage?tenant=" + id_ + "&format=csv");
  EXPECT_EQ(csv.status, 200);
  EXPECT_EQ(header(csv, "content-type"), "text/csv; charset=utf-8");
  EXPECT_EQ(std::count(csv.body.begin(), csv.body.end(), '\n'), 2) << "a header and the one request:\n" << csv.body;
  EXPECT_NE(csv.body.find(id), std::string::npos);
}

// A backup taken through the route while the store serves opens as a store
// with the request's record and the tenant's key: what an operator restores.
TEST_F(AdminApiTest, ABackupIsTheStoreAsOfTheCallAndNeverOverwrites) {
  const std::string id = run_request(2);
  const std::string dir = stack().dir_.sub("backups/" + id_);
  const json::value b = ok("POST", "/admin/backup", json::serialize(json::object{{"dir", dir}}), 201);
  EXPECT_EQ(b.at("dir"), json::value(dir));
  EXPECT_GT(b.at("files").to_number<uint64_t>(), 0u);
  EXPECT_GT(b.at("bytes").to_number<uint64_t>(), 0u);
  EXPECT_EQ(b.at("schema_version"), tenancy::Store::kSchemaVersion);
  {
    tenancy::Tenancy restored(dir);
    EXPECT_TRUE(restored.ledger().find(id).has_value());
    EXPECT_EQ(restored.authenticate(key_)->tenant.id, id_);
  }
  const ReplyEvent again = call("POST", "/admin/backup", json::serialize(json::object{{"dir", dir}}));
  EXPECT_TRUE(is_api_error(again, 409, "invalid_request_error", "already_exists"));
  EXPECT_NE(again.body.find("exists"), std::string::npos) << again.body;
  EXPECT_TRUE(is_api_error(call("POST", "/admin/backup", R"({"dir":"relative/dir"})"), 400, "invalid_request_error",
                           "invalid_value", "dir"));
  EXPECT_TRUE(is_api_error(call("POST", "/admin/backup", "{}"), 400, "invalid_request_error",
                           "missing_required_parameter", "dir"));
}

TEST_F(AdminApiTest, APinRunsThePromptOnceBilledAsACacheWriteAndAFlushDropsIt) {
  const TenantId label = serving::tenant_label(id_);
  const std::string base = "/admin/tenants/" + id_ + "/cache";
  const json::value pinned = ok(
      "POST", base + "/pins", json::serialize(json::object{{"prompt", serving::testing::kStoryPrompt}, {"ttl_s", 60}}));
  const auto tokens = pinned.at("pinned_tokens").to_number<int32_t>();
  EXPECT_GT(tokens, 0);
  EXPECT_EQ(pinned.at("ttl_s"), 60);
  EXPECT_GT(pinned.at("cost_micros").to_number<uint64_t>(), 0u);
  EXPECT_EQ(
      pinned.at("prompt_tokens").to_number<size_t>(),
      stack().tokenizer_->encode(serving::testing::kStoryPrompt, {.add_bos = true, .parse_special = false}).size());
  (void)stack().engine_->available_blocks();  // a step boundary: the loop has published the pins
  const int32_t blocks = stack().engine_->pinned_blocks(label);
  EXPECT_EQ(blocks * 16, tokens);
  const tenancy::UsageTotals billed = tenancy().ledger().usage(id_, 0, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(billed.requests, 1u) << "the pin ran once, billed to the tenant";
  EXPECT_GE(billed.tokens.cache_written, static_cast<uint64_t>(tokens));

  bool seen = false;
  const json::value cache = ok("GET", "/admin/cache");
  for (const json::value& row : cache.at("tenants").as_array())
    if (row.at("tenant") == json::value(id_)) {
      seen = true;
      EXPECT_EQ(row.at("blocks_pinned"), blocks);
    }
  EXPECT_TRUE(seen) << "the cache's per-tenant row names the tenant";

  const json::value flushed = ok("POST", base + "/evict", R"({"pins":true})");
  EXPECT_EQ(flushed.at("unpinned_blocks"), blocks);
  EXPECT_GE(flushed.at("evicted_blocks").to_number<int32_t>(), blocks);
  EXPECT_EQ(flushed.at("evicted_blocks_by_tier"),
            json::parse(R"({"device":)" + std::to_string(flushed.at("evicted_blocks").to_number<int32_t>()) + "}"));
  (void)stack().engine_->available_blocks();
  EXPECT_EQ(stack().engine_->pinned_blocks(label), 0);
}

TEST_F(AdminApiTest, OnARouteFrontTheCacheRoutesBelongToTheReplicas) {
  const std::unique_ptr<AdminApi> front = make_api(nullptr);
  for (const auto& [method, target] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/admin/cache"},
                                                        {"GET", "/admin/policy"},
                                                        {"PUT", "/admin/policy/device"},
                                                        {"POST", "/admin/tenants/" + id_ + "/cache/evict"},
                                                        {"GET", "/admin/cache/no-such-route"}}) {
    const ReplyEvent e = call(*front, method, target);
    EXPECT_TRUE(is_api_error(e, 404, "not_found_error", "not_found")) << method << " " << target;
    EXPECT_NE(e.body.find("route front"), std::string::npos) << e.body;
  }
  const ReplyEvent tenant = call(*front, "GET", "/admin/tenants/" + id_);
  EXPECT_EQ(tenant.status, 200) << "the tenancy routes are the front's own";
}

}  // namespace
}  // namespace kvgate::admin
