// The admin routes: JSON in and out, tenancy errors mapped to statuses
// (not found 404, already exists 409, bad argument 400), never a secret
// scope or key digest in an answer.
#include "gateway/admin/admin_api.h"

#include <boost/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"
#include "gateway/server/path_pattern.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/json_reply.h"
#include "gateway/serving/tenant_identity.h"
#include "gateway/serving/period_usage.h"
#include "tenancy/backup.h"
#include "tenancy/error.h"

namespace kvgate::admin {
namespace {

namespace json = boost::json;

json::object quotas_json(const tenancy::QuotaLimits& q) {
  return {{"requests_per_minute", q.requests_per_minute},
          {"tokens_per_minute", q.tokens_per_minute},
          {"max_concurrent_requests", q.max_concurrent_requests},
          {"monthly_spend_cap_micros", q.monthly_spend_cap_micros},
          {"max_cached_kv_blocks", q.max_cached_kv_blocks},
          {"cached_token_weight_permille", q.cached_token_weight_permille},
          {"max_pinned_kv_blocks", q.max_pinned_kv_blocks}};
}

void read_quotas(const openai::FieldReader& body, tenancy::QuotaLimits& q) {
  const json::value* v = body.find("quotas");
  if (!v) return;
  if (!v->is_object()) throw openai::invalid_type("quotas", "an object", openai::json_kind_name(*v));
  const openai::FieldReader f(v->as_object(), "quotas");
  auto u64 = [&](const char* key, auto& field) {
    if (const auto n = f.integer(key)) {
      if (*n < 0) throw openai::invalid_value(f.path(key), "must not be negative");
      field = static_cast<std::remove_reference_t<decltype(field)>>(*n);
    }
  };
  u64("requests_per_minute", q.requests_per_minute);
  u64("tokens_per_minute", q.tokens_per_minute);
  u64("max_concurrent_requests", q.max_concurrent_requests);
  u64("monthly_spend_cap_micros", q.monthly_spend_cap_micros);
  u64("max_cached_kv_blocks", q.max_cached_kv_blocks);
  u64("cached_token_weight_permille", q.cached_token_weight_permille);
  u64("max_pinned_kv_blocks", q.max_pinned_kv_blocks);
}

json::object tenant_json(const tenancy::Tenant& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"org_id", t.org_id},
          {"share_org_scope", t.share_org_scope},
          {"status", t.status == tenancy::TenantStatus::kActive ? "active" : "suspended"},
          {"plan_id", t.plan_id},
          {"quotas", quotas_json(t.quotas)},
          {"label", serving::tenant_label(t.id)}};  // the label its cache counters are kept under
}

json::object plan_json(const tenancy::PricePlan& p) {
  return {{"id", p.id},
          {"fresh_input_per_mtok", p.fresh_input_per_mtok},
          {"cached_input_per_mtok", p.cached_input_per_mtok},
          {"cache_write_per_mtok", p.cache_write_per_mtok},
          {"cache_write_5m_per_mtok", p.cache_write_5m_per_mtok},
          {"cache_write_1h_per_mtok", p.cache_write_1h_per_mtok},
          {"output_per_mtok", p.output_per_mtok}};
}

json::object key_json(const tenancy::ApiKeyInfo& k) {
  return {{"key_id", k.key_id},
          {"tenant_id", k.tenant_id},
          {"label", k.label},
          {"created_ns", k.created_ns},
          {"active", k.active()},
          {"replaced_by", k.replaced_by}};
}

json::object record_json(const tenancy::LedgerRecord& r) {
  const tenancy::TokenUsage& u = r.tokens;
  return {{"request_id", r.request_id},
          {"tenant_id", r.tenant_id},
          {"key_id", r.key_id},
          {"model", r.model},
          {"arrival_ns", r.arrival_ns},
          {"first_token_ns", r.first_token_ns},
          {"finish_ns", r.finish_ns},
          {"finish_reason", tenancy::finish_reason_name(r.finish_reason)},
          {"prompt_tokens", u.prompt_tokens},
          {"cached_tokens", u.cached()},
          {"cached_tokens_by_tier", {{"device", u.cached_device}, {"host", u.cached_host}, {"disk", u.cached_disk}}},
          {"fresh_prefill_tokens", u.fresh_prefill},
          {"cache_written_tokens", u.cache_written},
          {"cache_write_tokens_by_ttl", {{"5m", u.cache_write_5m}, {"1h", u.cache_write_1h}}},
          {"completion_tokens", u.output_tokens},
          {"cost_micros", r.cost_micros}};
}

json::object cache_json(const cache::CacheStats& st, const std::vector<tenancy::Tenant>& tenants, int64_t in_flight) {
  json::array per;
  for (const auto& [label, s] : st.tenants) {
    json::object o{{"label", label},
                   {"query_tokens", s.query_tokens},
                   {"hit_tokens", s.hit_tokens},
                   {"blocks_in_use", s.blocks_in_use},
                   {"blocks_cached_free", s.blocks_cached_free},
                   {"blocks_stored", s.blocks_stored},
                   {"evictions", s.evictions},
                   {"blocks_cached", s.blocks_cached},
                   {"blocks_pinned", s.blocks_pinned}};
    for (const tenancy::Tenant& t : tenants)
      if (serving::tenant_label(t.id) == label) o["tenant"] = t.id;
    per.push_back(std::move(o));
  }
  return {{"blocks_total", st.blocks_total},
          {"blocks_in_use", st.blocks_in_use},
          {"blocks_cached_free", st.blocks_cached_free},
          {"blocks_free", st.blocks_free},
          {"blocks_pinned", st.blocks_pinned},
          {"requests_in_flight", in_flight},
          {"tenants", std::move(per)}};
}

openai::ApiError from_tenancy(const tenancy::Error& e) {
  switch (e.code()) {
    case tenancy::ErrorCode::kNotFound: return openai::not_found(e.what());
    case tenancy::ErrorCode::kAlreadyExists: return {409, e.what(), "invalid_request_error", std::nullopt, "already_exists"};
    case tenancy::ErrorCode::kInvalidArgument: return openai::invalid_request(e.what());
    default: return openai::internal_error(e.what());
  }
}

}  // namespace

void AdminApi::operator()(const server::HttpRequest& req, server::Reply reply) {
  // The token first, on the receiving thread: a request without it queues
  // nothing, so no flood of them can delay the operator's.
  try {
    serving::require_admin(req, token_);
  } catch (const openai::ApiError& e) {
    return serving::send_error(reply, e);
  }
  const bool queued = work_.try_post([this, req, reply]() mutable {
    try {
      handle(req, reply);
    } catch (const openai::ApiError& e) {
      serving::send_error(reply, e);
    } catch (const tenancy::Error& e) {
      serving::send_error(reply, from_tenancy(e));
    } catch (const std::exception& e) {
      serving::send_error(reply, openai::internal_error(e.what()));
    }
  });
  if (!queued) serving::send_shed(reply, "admin");
}

const AdminApi::Route AdminApi::kRoutes[] = {
    {"GET", "/admin/tenants", &AdminApi::list_tenants, false},
    {"POST", "/admin/tenants", &AdminApi::create_tenant, false},
    {"GET", "/admin/tenants/{id}", &AdminApi::get_tenant, false},
    {"PATCH", "/admin/tenants/{id}", &AdminApi::update_tenant, false},
    {"GET", "/admin/tenants/{id}/keys", &AdminApi::list_keys, false},
    {"POST", "/admin/tenants/{id}/keys", &AdminApi::create_key, false},
    {"DELETE", "/admin/tenants/{id}/keys/{key_id}", &AdminApi::revoke_key, false},
    {"POST", "/admin/tenants/{id}/keys/{key_id}/rotate", &AdminApi::rotate_key, false},
    {"GET", "/admin/usage", &AdminApi::usage, false},
    {"GET", "/admin/plans", &AdminApi::list_plans, false},
    {"PUT", "/admin/plans/{id}", &AdminApi::put_plan, false},
    {"GET", "/admin/requests/{request_id}", &AdminApi::get_request, false},
    {"POST", "/admin/backup", &AdminApi::backup, false},
    {"GET", "/admin/cache", &AdminApi::cache_stats, true},
    {"GET", "/admin/cache/tiers", &AdminApi::tier_stats, true},
    {"POST", "/admin/cache/purge", &AdminApi::purge, true},
    {"GET", "/admin/policy", &AdminApi::get_policy, true},
    {"PUT", "/admin/policy/{tier}", &AdminApi::set_policy, true},
    {"POST", "/admin/tenants/{id}/cache/evict", &AdminApi::evict_tenant, true},
    // A pin runs a request for the tenant: on a front, through its pipeline
    // to the replica the route policy places the prompt on, which pins it.
    {"POST", "/admin/tenants/{id}/cache/pins", &AdminApi::pin, false},
};

namespace {

// A route front keeps no KV cache: each replica's own is behind its admin API.
[[noreturn]] void not_on_a_front(std::string_view path) {
  std::string why = "this is a route front; the KV cache and its policies are each replica's: send ";
  why.append(path).append(" to a replica's admin API");
  throw openai::not_found(why);
}

bool is_cache_path(const std::vector<std::string_view>& p) {  // p[0] == "admin"
  return p.size() >= 2 && (p[1] == "cache" || p[1] == "policy" || (p.size() >= 4 && p[1] == "tenants" && p[3] == "cache"));
}

}  // namespace

void AdminApi::handle(const server::HttpRequest& req, server::Reply& reply) {
  Call call{req, reply, {}};
  const std::vector<std::string_view> path = server::path_segments(req.path());
  for (const Route& r : kRoutes) {
    if (r.method != req.method || !r.pattern.match(path, call.params)) continue;
    if (r.engine_only && !engine_) not_on_a_front(req.path());
    return (this->*r.answer)(call);
  }
  if (!engine_ && is_cache_path(path)) not_on_a_front(req.path());
  // A known path with another method is 405, as on every other route.
  for (const Route& r : kRoutes)
    if (r.pattern.match(path, call.params)) throw openai::method_not_allowed(req.method, req.path());
  throw openai::route_not_found(req.method, req.path());
}

void AdminApi::list_tenants(const Call& c) {
  json::array out;
  for (const tenancy::Tenant& t : tenancy_.tenants().list()) out.push_back(tenant_json(t));
  serving::send_json(c.reply, 200, {{"object", "list"}, {"data", std::move(out)}});
}

void AdminApi::create_tenant(const Call& c) {
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  tenancy::NewTenant n;
  n.id = f.required_string("id");
  n.name = f.string("name").value_or(n.id);
  n.org_id = f.string("org_id").value_or("");
  n.share_org_scope = f.boolean("share_org_scope").value_or(false);
  n.plan_id = f.string("plan_id").value_or("demo");
  read_quotas(f, n.quotas);
  serving::send_json(c.reply, 201, tenant_json(tenancy_.tenants().create(n)));
}

void AdminApi::get_tenant(const Call& c) {
  serving::send_json(c.reply, 200, tenant_json(tenancy_.tenants().get(c.params[0])));
}

void AdminApi::update_tenant(const Call& c) {
  tenancy::Tenant t = tenancy_.tenants().get(c.params[0]);
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  if (auto name = f.string("name")) t.name = *name;
  if (auto plan = f.string("plan_id")) t.plan_id = *plan;
  if (auto status = f.string("status")) {
    if (*status != "active" && *status != "suspended")
      throw openai::invalid_value("status", "must be \"active\" or \"suspended\"");
    t.status = *status == "active" ? tenancy::TenantStatus::kActive : tenancy::TenantStatus::kSuspended;
  }
  read_quotas(f, t.quotas);
  serving::send_json(c.reply, 200, tenant_json(tenancy_.tenants().update(t)));
}

void AdminApi::list_keys(const Call& c) {
  (void)tenancy_.tenants().get(c.params[0]);  // 404 for an unknown tenant, not an empty list
  json::array out;
  for (const tenancy::ApiKeyInfo& k : tenancy_.keys().list(c.params[0])) out.push_back(key_json(k));
  serving::send_json(c.reply, 200, {{"object", "list"}, {"data", std::move(out)}});
}

void AdminApi::create_key(const Call& c) {
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  const tenancy::IssuedKey k = tenancy_.keys().create(c.params[0], f.string("label").value_or(""));
  json::object out = key_json(k.info);
  out["api_key"] = k.plaintext;  // shown once; only its digest is kept
  serving::send_json(c.reply, 201, out);
}

void AdminApi::revoke_key(const Call& c) {
  tenancy_.keys().revoke(c.params[0], c.params[1]);
  serving::send_json(c.reply, 200, {{"key_id", c.params[1]}, {"revoked", true}});
}

void AdminApi::rotate_key(const Call& c) {
  const tenancy::IssuedKey k = tenancy_.keys().rotate(c.params[0], c.params[1]);
  json::object out = key_json(k.info);
  out["api_key"] = k.plaintext;  // shown once
  out["replaces"] = c.params[1];
  serving::send_json(c.reply, 201, out);
}

void AdminApi::usage(const Call& c) {
  const std::string& target = c.req.target;
  const std::optional<std::string_view> tenant = serving::query_value(target, "tenant");
  if (!tenant || tenant->empty()) throw openai::missing_parameter("tenant");
  const std::string id(*tenant);
  (void)tenancy_.tenants().get(id);  // 404 for an unknown tenant, not an empty report
  const serving::UsagePeriod period = serving::usage_period(target);
  const std::optional<std::string_view> format = serving::query_value(target, "format");
  if (format && *format == "csv") {
    std::ostringstream csv;
    tenancy_.ledger().export_csv(id, period.start_ns(), period.end_ns(), csv);
    c.reply.send(200, {{"Content-Type", "text/csv; charset=utf-8"}}, std::move(csv).str());
    return;
  }
  if (format && *format != "json") throw openai::invalid_value("format", "must be \"json\" or \"csv\"");
  json::object out = serving::usage_json(id, period, tenancy_.ledger().usage(id, period.start_ns(), period.end_ns()));
  json::array days;
  for (const tenancy::DailyUsage& d : tenancy_.ledger().usage_by_day(id, period.start_ns(), period.end_ns())) {
    json::object day{{"date", d.date}};
    for (auto& kv : serving::usage_totals_json(d.totals)) day.insert(kv);
    days.push_back(std::move(day));
  }
  out["by_day"] = std::move(days);
  serving::send_json(c.reply, 200, out);
}

void AdminApi::list_plans(const Call& c) {
  json::array out;
  for (const tenancy::PricePlan& plan : tenancy_.tenants().list_plans()) out.push_back(plan_json(plan));
  serving::send_json(c.reply, 200, {{"object", "list"}, {"data", std::move(out)}});
}

void AdminApi::put_plan(const Call& c) {
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  auto price = [&](const char* key) -> std::optional<uint64_t> {
    const auto v = f.integer(key);
    if (v && *v < 0) throw openai::invalid_value(key, "must not be negative");
    return v ? std::optional<uint64_t>(static_cast<uint64_t>(*v)) : std::nullopt;
  };
  const auto fresh = price("fresh_input_per_mtok"), output = price("output_per_mtok");
  if (!fresh) throw openai::missing_parameter("fresh_input_per_mtok");
  if (!output) throw openai::missing_parameter("output_per_mtok");
  tenancy::PricePlan plan = tenancy::PricePlan::with_default_cached(std::string(c.params[0]), *fresh, *output,
                                                                    price("cache_write_per_mtok").value_or(0));
  if (auto cached = price("cached_input_per_mtok")) plan.cached_input_per_mtok = *cached;
  if (auto w = price("cache_write_5m_per_mtok")) plan.cache_write_5m_per_mtok = *w;
  if (auto w = price("cache_write_1h_per_mtok")) plan.cache_write_1h_per_mtok = *w;
  tenancy_.tenants().put_plan(plan);
  serving::send_json(c.reply, 200, plan_json(plan));
}

void AdminApi::get_request(const Call& c) {
  const std::optional<tenancy::LedgerRecord> r = tenancy_.ledger().find(c.params[0]);
  if (!r) throw openai::not_found("no ledger record for request '" + std::string(c.params[0]) + "'");
  serving::send_json(c.reply, 200, record_json(*r));
}

// The tenancy store, copied while it serves (tenancy/backup.h). The directory
// is on the server's machine, not the caller's: an absolute path, so that
// where it lands does not depend on the server's working directory.
void AdminApi::backup(const Call& c) {
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  const std::string dir = f.required_string("dir");
  if (dir.empty() || dir.front() != '/')
    throw openai::invalid_value("dir", "must be an absolute path on the server's machine (got \"" + dir + "\")");
  const tenancy::BackupInfo b = tenancy::backup_store(tenancy_.store(), dir);
  serving::send_json(c.reply, 201,
                     {{"dir", b.dir}, {"files", b.files}, {"bytes", b.bytes}, {"schema_version", b.schema_version}});
}

json::object AdminApi::body_of(const server::HttpRequest& req) {
  return openai::parse_json_object(req.body.empty() ? std::string_view("{}") : req.body);
}

void AdminApi::cache_stats(const Call& c) {
  serving::send_json(c.reply, 200, cache_json(engine_->cache_stats(), tenancy_.tenants().list(), engine_->outstanding()));
}

}  // namespace kvgate::admin
