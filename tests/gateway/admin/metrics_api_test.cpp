// MetricsApi, the observability routes, called as the server calls them:
// mounted on the API listener (where /metrics needs the admin token and
// /dashboard/data shows a tenant its own figures alone) and as the handler
// of the separate metrics listener (no token). The exposition is
// Prometheus's text format holding the kvgate_ families, refreshed before
// every scrape, with the series of a request that ran.
#include "gateway/admin/metrics_api.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/version.h"
#include "gateway/serving/json_reply.h"
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

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

// The families an exposition declares ("# TYPE name kind"), and whether
// every sample line belongs to a family declared above it, each declared once.
struct Exposition {
  std::map<std::string, std::string> kinds;
  bool well_formed = true;
  std::string why;
};
Exposition read_exposition(const std::string& text) {
  Exposition x;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string name, kind;
      words >> name >> kind;
      if (!x.kinds.emplace(name, kind).second) x.well_formed = false, x.why = "declared twice: " + name;
      continue;
    }
    if (line.empty() || line.starts_with("# HELP ")) continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!x.kinds.contains(family) && name.ends_with(suffix)) family = name.substr(0, name.size() - strlen(suffix));
    if (!x.kinds.contains(family)) x.well_formed = false, x.why = "a sample of no declared family: " + line;
  }
  return x;
}

class MetricsApiTest : public testing::AdminSuite<MetricsApiTest> {
 protected:
  void SetUp() override {
    AdminSuite::SetUp();
    api_ = make_api([this] {
      ++refreshes_;
      stack().metrics_.collect(*stack().engine_);
    });
  }

  std::unique_ptr<MetricsApi> make_api(MetricsApi::Refresh refresh, serving::BlockingPool* work = nullptr) {
    serving::testing::PipelineStack& s = stack();
    auto api = std::make_unique<MetricsApi>(std::move(refresh), s.metrics_, *s.tenancy_, work ? *work : s.side_, *token_);
    mounts_ = api->mounts();
    return api;
  }

  // A request on the API listener, answered as HttpApi answers a mount.
  ReplyEvent mounted(const std::string& method, const std::string& target, std::optional<std::string> bearer) {
    auto rec = std::make_shared<ReplyRecorder>();
    server::Reply reply(rec, 1);
    const server::HttpRequest req = test_request(method, target, {}, std::move(bearer));
    const server::MountedRoutes* routes = server::find_mount(mounts_, req.path());
    EXPECT_TRUE(routes) << target << " is not mounted";
    if (!routes) return {};
    serving::answer_or_error(reply, [&] { (*routes)(req, reply); });
    return first(*rec, reply);
  }
  // A request on the metrics listener.
  ReplyEvent listener(const std::string& method, const std::string& target) {
    auto rec = std::make_shared<ReplyRecorder>();
    server::Reply reply(rec, 1);
    api_->open_listener()(test_request(method, target), reply);
    return first(*rec, reply);
  }
  static ReplyEvent first(ReplyRecorder& rec, server::Reply& reply) {
    reply = server::Reply();  // only the API's copies are left
    const std::vector<ReplyEvent> ev = rec.wait();
    EXPECT_EQ(ev.size(), 1u);
    return ev.empty() ? ReplyEvent{} : ev.front();
  }

  std::atomic<int> refreshes_{0};
  std::unique_ptr<MetricsApi> api_;
  std::vector<server::Mount> mounts_;
};

TEST_F(MetricsApiTest, OnTheApiListenerTheExpositionNeedsTheAdminToken) {
  EXPECT_TRUE(
      is_api_error(mounted("GET", "/metrics", std::nullopt), 401, "authentication_error", "missing_admin_token"));
  EXPECT_TRUE(is_api_error(mounted("GET", "/metrics", key_), 403, "permission_error", "permission_denied"))
      << "a tenant must not read every tenant's figures";
  EXPECT_EQ(refreshes_, 0) << "a refused scrape costs the engine nothing";
  const ReplyEvent e = mounted("GET", "/metrics", admin_token_);
  EXPECT_EQ(e.status, 200);
  EXPECT_EQ(header(e, "content-type"), kExpositionType);
  EXPECT_EQ(header(e, "cache-control"), "no-store");
  EXPECT_EQ(refreshes_, 1) << "each scrape refreshes the figures read at scrape time first";
}

TEST_F(MetricsApiTest, TheExpositionHoldsTheKvgateFamiliesAndARequestsSeries) {
  run_request(3);
  const ReplyEvent e = mounted("GET", "/metrics", admin_token_);
  ASSERT_EQ(e.status, 200) << e.body;
  const Exposition x = read_exposition(e.body);
  EXPECT_TRUE(x.well_formed) << x.why;
  const std::map<std::string, std::string> families = {
      {"kvgate_requests_total", "counter"},
      {"kvgate_prompt_tokens_total", "counter"},
      {"kvgate_cached_prompt_tokens_total", "counter"},
      {"kvgate_fresh_prefill_tokens_total", "counter"},
      {"kvgate_output_tokens_total", "counter"},
      {"kvgate_cost_usd_total", "counter"},
      {"kvgate_prefix_cache_queries_tokens_total", "counter"},
      {"kvgate_prefix_cache_hits_tokens_total", "counter"},
      {"kvgate_time_to_first_token_seconds", "histogram"},
      {"kvgate_inter_token_latency_seconds", "histogram"},
      {"kvgate_kv_blocks", "gauge"},
      {"kvgate_kv_usage_ratio", "gauge"},
      {"kvgate_requests_running", "gauge"},
      {"kvgate_requests_waiting", "gauge"},
  };
  for (const auto& [name, kind] : families) {
    ASSERT_TRUE(x.kinds.contains(name)) << name << " is missing";
    EXPECT_EQ(x.kinds.at(name), kind) << name;
    EXPECT_NE(e.body.find("# HELP " + name + " "), std::string::npos) << name << " has no HELP";
  }
  const std::string series =
      "kvgate_requests_total{tenant=\"" + id_ + "\",model=\"stories260K\",finish_reason=\"length\"} 1\n";
  EXPECT_NE(e.body.find(series), std::string::npos) << "no " << series << " in\n" << e.body;
  EXPECT_NE(e.body.find("kvgate_output_tokens_total{tenant=\"" + id_ + "\",model=\"stories260K\"} 3\n"),
            std::string::npos);
  EXPECT_NE(e.body.find("kvgate_kv_blocks{"), std::string::npos) << "the engine's state, read by the refresh";
  EXPECT_EQ(e.body.find(key_), std::string::npos) << "no secret in the exposition";
}

// Scrapes run on a bounded pool: with its one thread held and its queue
// full, a scrape is a 503 with retry-after on either listener, and a
// scrape without a credential is refused before anything is queued.
TEST_F(MetricsApiTest, AFullScrapeQueueShedsWith503) {
  serving::testing::FullPool held;
  ASSERT_TRUE(held.full());
  api_ = make_api([this] { ++refreshes_; }, &held.pool());

  EXPECT_TRUE(is_api_error(mounted("GET", "/dashboard/data", std::nullopt), 401, "authentication_error",
                           "invalid_api_key"));
  for (const ReplyEvent& e :
       {mounted("GET", "/metrics", admin_token_), mounted("GET", "/dashboard/data", key_), listener("GET", "/metrics")}) {
    EXPECT_TRUE(is_api_error(e, 503, "server_error", "overloaded")) << e.body;
    EXPECT_EQ(header(e, "retry-after"), "1");
  }
  EXPECT_EQ(refreshes_, 0);
  api_.reset();  // before `held`
}

// ...and its detail (which may name a file or a replica's URL) stays in the
// operator's log: /dashboard/data answers tenants too.
TEST_F(MetricsApiTest, ARefreshThatFailsIsA500NotAStaleExposition) {
  api_ = make_api([] { throw std::runtime_error("replica https://10.0.0.7:8443 unreachable"); });
  const ReplyEvent e = mounted("GET", "/metrics", admin_token_);
  EXPECT_TRUE(is_api_error(e, 500, "server_error", "internal_error"));
  const ReplyEvent tenant = mounted("GET", "/dashboard/data", key_);
  EXPECT_TRUE(is_api_error(tenant, 500, "server_error", "internal_error"));
  for (const ReplyEvent& r : {e, tenant}) EXPECT_EQ(r.body.find("10.0.0.7"), std::string::npos) << r.body;
}

TEST_F(MetricsApiTest, TheDashboardPageIsOpenAndItsDataShowsATenantItsOwnFiguresAlone) {
  const std::string other_key = stack().new_key(tenant_id("other"));
  run_request(2);
  const ReplyEvent page = mounted("GET", "/dashboard", std::nullopt);
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(header(page, "content-type"), "text/html; charset=utf-8");
  EXPECT_FALSE(page.body.empty());

  EXPECT_TRUE(
      is_api_error(mounted("GET", "/dashboard/data", std::nullopt), 401, "authentication_error", "invalid_api_key"));
  EXPECT_TRUE(
      is_api_error(mounted("GET", "/dashboard/data", "kvg-nobody"), 401, "authentication_error", "invalid_api_key"));

  const ReplyEvent mine = mounted("GET", "/dashboard/data", key_);
  ASSERT_EQ(mine.status, 200) << mine.body;
  const json::value own = json::parse(mine.body);
  EXPECT_EQ(own.at("scope"), "tenant");
  ASSERT_EQ(own.at("tenants").as_array().size(), 1u);
  EXPECT_EQ(own.at("tenants").at(0).at("tenant"), json::value(id_));
  EXPECT_EQ(own.at("tenants").at(0).at("requests"), 1);
  EXPECT_EQ(own.at("tenants").at(0).at("output_tokens"), 2);
  const ReplyEvent theirs = mounted("GET", "/dashboard/data", other_key);
  ASSERT_EQ(theirs.status, 200) << theirs.body;
  EXPECT_EQ(json::parse(theirs.body).at("tenant"), json::value(tenant_id("other")));
  EXPECT_EQ(theirs.body.find(id_), std::string::npos) << "another tenant sees nothing of this one's: " << theirs.body;

  const json::value all = json::parse(mounted("GET", "/dashboard/data", admin_token_).body);
  EXPECT_EQ(all.at("scope"), "admin");
  std::set<std::string> rows;
  for (const json::value& row : all.at("tenants").as_array()) rows.emplace(row.at("tenant").as_string());
  EXPECT_TRUE(rows.contains(id_));
}

TEST_F(MetricsApiTest, AWrongPathIs404AndAWrongMethod405) {
  EXPECT_TRUE(
      is_api_error(mounted("POST", "/metrics", admin_token_), 405, "invalid_request_error", "method_not_allowed"));
  EXPECT_TRUE(
      is_api_error(mounted("GET", "/metrics/extra", admin_token_), 404, "invalid_request_error", "unknown_url"));
  EXPECT_TRUE(is_api_error(mounted("DELETE", "/dashboard/data", admin_token_), 405, "invalid_request_error",
                           "method_not_allowed"));
  EXPECT_TRUE(
      is_api_error(mounted("GET", "/dashboard/other", admin_token_), 404, "invalid_request_error", "unknown_url"));
}

TEST_F(MetricsApiTest, TheMetricsListenerServesTheExpositionAndHealthWithoutAToken) {
  const ReplyEvent e = listener("GET", "/metrics");
  EXPECT_EQ(e.status, 200);
  EXPECT_EQ(header(e, "content-type"), kExpositionType);
  EXPECT_TRUE(read_exposition(e.body).kinds.contains("kvgate_requests_total"));
  EXPECT_EQ(refreshes_, 1);
  const ReplyEvent health = listener("GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(json::parse(health.body), (json::value{{"status", "ok"}, {"version", build_version()}}));
  EXPECT_TRUE(is_api_error(listener("GET", "/admin/tenants"), 404, "invalid_request_error", "unknown_url"))
      << "only the scrape and the health check: nothing else is open without a credential";
  EXPECT_TRUE(is_api_error(listener("GET", "/dashboard/data"), 404, "invalid_request_error", "unknown_url"));
  EXPECT_TRUE(is_api_error(listener("POST", "/metrics"), 405, "invalid_request_error", "method_not_allowed"));
}

}  // namespace
}  // namespace kvgate::admin
