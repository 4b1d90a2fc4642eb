// Set-up calls, the run, the counters' deltas, the report.
#include "gateway/tools/loadgen/bench_session.h"

#include <map>
#include <optional>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "base/error.h"
#include "gateway/tools/loadgen/blocking_fetch.h"
#include "gateway/client/connection_pool.h"
#include "gateway/tools/loadgen/prometheus_scrape.h"

namespace kvgate::loadgen {
namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr auto kSetupTimeout = std::chrono::seconds(60);

FetchResult call(net::io_context& io, client::ConnectionPool& pool, const std::string& method, const std::string& path,
                 const std::string& bearer, const std::string& body = "") {
  client::HttpCall c;
  c.method = method;
  c.path = path;
  c.bearer = bearer;
  c.body = body;
  c.headers = {{"User-Agent", "kvgate-bench-serve"}};
  c.timeout = kSetupTimeout;
  FetchResult r = blocking_fetch(io, pool, c);
  if (!r.error.empty()) throw Error(method + " " + path + ": " + r.error);
  return r;
}

[[noreturn]] void refused(const std::string& what, const FetchResult& r) {
  throw Error(what + ": HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 300));
}

json::value parse_or_fail(const std::string& what, const FetchResult& r) {
  json::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec) throw Error(what + ": the answer is not JSON: " + r.body.substr(0, 200));
  return v;
}

struct Tenants {
  std::vector<std::string> ids;  // empty when keys were given
  std::vector<std::string> keys;
};

Tenants make_tenants(net::io_context& io, client::ConnectionPool& pool, const SessionOptions& o, int32_t n) {
  Tenants t;
  for (int32_t i = 0; i < n; ++i) {
    const std::string id = o.tenant_prefix + "-" + std::to_string(i);
    json::object body{{"id", id}, {"quotas", json::object{}}};
    if (!o.plan_id.empty()) body["plan_id"] = o.plan_id;
    FetchResult r = call(io, pool, "POST", "/admin/tenants", o.admin_token, json::serialize(body));
    if (r.status != 201 && r.status != 409) refused("POST /admin/tenants " + id, r);
    r = call(io, pool, "POST", "/admin/tenants/" + id + "/keys", o.admin_token,
             json::serialize(json::object{{"label", "bench-serve"}}));
    if (r.status != 201) refused("POST /admin/tenants/" + id + "/keys", r);
    const json::value v = parse_or_fail("POST /admin/tenants/" + id + "/keys", r);
    const json::value* key = v.is_object() ? v.get_object().if_contains("api_key") : nullptr;
    if (!key || !key->is_string()) throw Error("POST /admin/tenants/" + id + "/keys: no api_key in the answer");
    t.ids.push_back(id);
    t.keys.emplace_back(key->get_string());
  }
  return t;
}

std::string first_model(net::io_context& io, client::ConnectionPool& pool, const std::string& key) {
  const FetchResult r = call(io, pool, "GET", "/v1/models", key);
  if (r.status != 200) refused("GET /v1/models", r);
  const json::value v = parse_or_fail("GET /v1/models", r);
  const json::value* data = v.is_object() ? v.get_object().if_contains("data") : nullptr;
  if (data && data->is_array() && !data->get_array().empty() && data->get_array()[0].is_object())
    if (const json::value* id = data->get_array()[0].get_object().if_contains("id"); id && id->is_string())
      return std::string(id->get_string());
  throw Error("GET /v1/models: no model listed");
}

// The text of GET /metrics, or nullopt where the server has none.
std::optional<std::string> scrape(net::io_context& io, client::ConnectionPool& pool, const std::string& admin_token) {
  const FetchResult r = call(io, pool, "GET", "/metrics", admin_token);
  if (r.status != 200) return std::nullopt;
  return r.body;
}

// after - before of one family, summed over the run's tenants (all when none named).
double delta(const std::string& before, const std::string& after, const char* family,
             const std::set<std::string>& tenants) {
  auto b = sum_by_label(before, family, "tenant");
  auto a = sum_by_label(after, family, "tenant");
  double d = 0;
  for (const auto& [tenant, v] : a)
    if (tenants.empty() || tenants.count(tenant)) d += v - (b.count(tenant) ? b[tenant] : 0.0);
  return d;
}

bool has_family(const std::string& text, const char* family) { return !sum_by_label(text, family, "tenant").empty(); }

}  // namespace

BenchReport run_bench_session(const Workload& w, SessionOptions o, std::FILE* log) {
  net::io_context io;
  const bool verify_host = !o.tls.insecure;
  client::ConnectionPool pool(io, client::make_client_tls(o.tls), client::parse_https_url(o.url), verify_host);

  Tenants tenants;
  if (!o.api_keys.empty()) {
    if (static_cast<int32_t>(o.api_keys.size()) < w.tenants)
      throw Error("the workload has " + std::to_string(w.tenants) + " tenants but " +
                  std::to_string(o.api_keys.size()) + " --api-key were given");
    tenants.keys = o.api_keys;
  } else if (!o.admin_token.empty()) {
    tenants = make_tenants(io, pool, o, w.tenants);
    if (log) std::fprintf(log, "bench-serve: %d tenants %s-0..%d, each with a new key\n", w.tenants,
                          o.tenant_prefix.c_str(), w.tenants - 1);
  } else {
    throw Error("give --api-key (one per tenant) or --admin-token to make the tenants");
  }
  o.run.api_keys = tenants.keys;
  if (o.run.model.empty()) o.run.model = first_model(io, pool, tenants.keys[0]);

  std::optional<std::string> before;
  if (!o.admin_token.empty()) before = scrape(io, pool, o.admin_token);

  const RunResult run = run_load(io, pool, w, o.run);

  Bill bill = bill_from_usage(run);
  std::optional<ServerCacheCounters> counters;
  if (before) {
    const std::optional<std::string> after = scrape(io, pool, o.admin_token);
    const std::set<std::string> ids(tenants.ids.begin(), tenants.ids.end());
    if (after && has_family(*after, "kvgate_cost_usd_total")) {
      bill.source = "metrics";
      bill.cost_usd = delta(*before, *after, "kvgate_cost_usd_total", ids);
      if (has_family(*after, "kvgate_cost_without_cache_usd_total"))
        bill.cost_without_cache_usd = delta(*before, *after, "kvgate_cost_without_cache_usd_total", ids);
    }
    if (after && has_family(*after, "kvgate_prefix_cache_queries_tokens_total"))
      counters = ServerCacheCounters{delta(*before, *after, "kvgate_prefix_cache_queries_tokens_total", ids),
                                     delta(*before, *after, "kvgate_prefix_cache_hits_tokens_total", ids)};
  }
  ReportContext ctx = o.report;
  ctx.max_concurrency = o.run.max_concurrency;
  return make_report(w, run, ctx, bill, counters);
}

}  // namespace kvgate::loadgen
