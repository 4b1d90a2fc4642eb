// The admin routes that act on the KV cache: a tenant's eviction and pins,
// and the eviction policy (admin_api.h lists them). They run on a work
// thread and reach the engine loop through Engine::control / inspect, which
// apply them between steps: a referenced block is never taken, and a
// switched policy is handed every cached block.
#include <boost/json.hpp>

#include <algorithm>
#include <memory>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"
#include "gateway/admin/admin_api.h"
#include "gateway/serving/hex_text.h"
#include "gateway/serving/json_reply.h"
#include "gateway/serving/tenant_identity.h"
#include "policies/eviction/policy_error.h"
#include "policies/eviction/policy_registry.h"
#include "tenancy/random_bytes.h"

namespace kvgate::admin {
namespace {

namespace json = boost::json;

json::object params_json(const policies::PolicyParams& p) {
  json::object o;
  for (const auto& [k, v] : p) o[k] = v;
  return o;
}

json::object tier_json(std::string_view tier, std::string_view policy, const policies::PolicyParams& params) {
  return {{"tier", tier}, {"policy", policy}, {"params", params_json(params)}};
}

json::object stats_json(std::string_view tier, const cache::TierStats& s) {
  json::object faults;
  for (const auto& [reason, n] : s.faults) faults[reason] = n;
  return {{"tier", tier},           {"capacity_bytes", s.capacity_bytes}, {"used_bytes", s.used_bytes},
          {"blocks", s.blocks},     {"blocks_in_use", s.pinned},          {"stored", s.stored},
          {"refused", s.refused},   {"evicted", s.evicted},               {"hits", s.hits},
          {"misses", s.misses},     {"faults", std::move(faults)},        {"write_errors", s.write_errors},
          {"persisted", s.persisted}, {"foreign", s.foreign}};
}

json::array catalog_json() {
  json::array out;
  for (const policies::PolicyInfo& info : policies::eviction_policies()) {
    if (!info.online) continue;  // the simulator's bound cannot serve
    json::object params;
    for (const auto& p : info.params) params[p.name] = p.default_value;
    out.push_back(json::object{{"name", info.name}, {"description", info.description}, {"params", std::move(params)}});
  }
  return out;
}

// {"policy": "s3fifo", "params": {"small": 0.1}} or {"policy": "s3fifo:small=0.1"}.
policies::PolicySpec spec_from(const json::object& body) {
  const openai::FieldReader f(body, "");
  policies::PolicySpec spec = policies::parse_policy_spec(f.required_string("policy"));
  if (const json::value* v = f.find("params")) {
    if (!v->is_object()) throw openai::invalid_type("params", "an object", openai::json_kind_name(*v));
    for (const auto& [key, value] : v->as_object()) {
      if (!value.is_number()) throw openai::invalid_type("params." + std::string(key), "a number", openai::json_kind_name(value));
      spec.params[std::string(key)] = value.to_number<double>();
    }
    (void)policies::resolve_params(spec);  // names and values checked as the parser checks them
  }
  return spec;
}

// Answers an operator's pin when the request that made it ends.
class PinReply final : public serving::Sink {
 public:
  PinReply(server::Reply reply, int64_t ttl_s) : reply_(std::move(reply)), ttl_s_(ttl_s) {}
  void on_text(std::string_view) override {}
  void on_done(const serving::Served& s) override {
    if (!s.error.empty()) return serving::send_error(reply_, openai::internal_error(s.error));
    if (s.pin_refused)
      return serving::send_error(reply_, openai::rate_limited("the tenant's cache quota has no room for this pin beside its "
                                                     "other pins"));
    serving::send_json(reply_, 200,
              {{"pinned_tokens", s.pinned_tokens},
               {"ttl_s", ttl_s_},
               {"cost_micros", s.cost_micros},
               {"prompt_tokens", s.usage.prompt_tokens}});
  }

 private:
  server::Reply reply_;
  const int64_t ttl_s_;
};

}  // namespace

void AdminApi::get_policy(const Call& c) {
  json::array tiers;
  engine_->inspect([&](const Scheduler& s) {
    tiers.push_back(tier_json("device", s.pool().policy().name(), s.pool().policy().params()));
  });
  if (tiers_.host) tiers.push_back(tier_json("host", tiers_.host->policy_name(), tiers_.host->policy_params()));
  if (tiers_.disk) tiers.push_back(tier_json("disk", tiers_.disk->policy_name(), tiers_.disk->policy_params()));
  serving::send_json(c.reply, 200, {{"tiers", std::move(tiers)}, {"available", catalog_json()}});
}

void AdminApi::set_policy(const Call& c) {
  const std::string tier(c.params[0]);
  const bool known = tier == "device" || (tier == "host" && tiers_.host) || (tier == "disk" && tiers_.disk);
  if (!known) {
    std::string have = "device";
    for (const std::string& t : tiers_.names()) have += ", " + t;
    throw openai::not_found("no KV tier '" + tier + "' on this server (it has: " + have + ")");
  }
  std::unique_ptr<policies::EvictionPolicy> next;
  try {
    next = policies::make_eviction_policy(spec_from(body_of(c.req)));
  } catch (const policies::PolicyError& e) {
    throw openai::invalid_request(e.what(), "policy");
  }
  json::object out;
  if (tier == "device") {
    engine_->control([&](Scheduler& s) {
      s.set_eviction_policy(std::move(next));
      out = tier_json(tier, s.pool().policy().name(), s.pool().policy().params());
    });
  } else if (tier == "host") {
    tiers_.host->set_policy(std::move(next));
    out = tier_json(tier, tiers_.host->policy_name(), tiers_.host->policy_params());
  } else {
    tiers_.disk->set_policy(std::move(next));
    out = tier_json(tier, tiers_.disk->policy_name(), tiers_.disk->policy_params());
  }
  // The config file is the policy's source of truth: a live change lasts
  // until the server restarts, and the answer says so and where to keep it.
  const char* key = tier == "device" ? "[model] eviction_policy (--eviction-policy)"
                    : tier == "host" ? "[kv_tiers] host_policy (--kv-host-policy)"
                                     : "[kv_tiers] disk_policy (--kv-disk-policy)";
  out["until_restart"] = true;
  out["note"] = std::string("in effect until the server restarts; to keep it, set ") + key + " in the config";
  serving::send_json(c.reply, 200, out);
}

void AdminApi::tier_stats(const Call& c) {
  json::array tiers;
  if (tiers_.host) tiers.push_back(stats_json("host", tiers_.host->stats()));
  if (tiers_.disk) tiers.push_back(stats_json("disk", tiers_.disk->stats()));
  if (tiers_.redis) {
    const cache::RedisTierStats s = tiers_.redis->stats();
    json::object row = stats_json("redis", s.tier);  // blocks: the keys it knows of, not Redis's count
    row["address"] = tiers_.redis->address();
    row["connected"] = s.connected;
    row["read_errors"] = s.read_errors;
    row["unsealed"] = s.unsealed;
    row["connects"] = s.connects;
    tiers.push_back(std::move(row));
  }
  serving::send_json(c.reply, 200, {{"tiers", std::move(tiers)}});
}

void AdminApi::purge(const Call& c) {
  if (!tiers_.disk) throw openai::not_found("this server has no disk tier (kv_tiers.disk_bytes is 0)");
  const json::object o = body_of(c.req);
  const bool all = openai::FieldReader(o, "").boolean("all").value_or(false);
  const int64_t n = all ? tiers_.disk->purge_all() : tiers_.disk->purge_foreign();
  serving::send_json(c.reply, 200, {{"purged_blocks", n}, {"all", all}});
}

void AdminApi::evict_tenant(const Call& c) {
  const tenancy::Tenant t = tenancy_.tenants().get(c.params[0]);
  const json::object o = body_of(c.req);
  const bool pins = openai::FieldReader(o, "").boolean("pins").value_or(false);
  cache::BlockPool::TenantEviction e;
  const TenantId label = serving::tenant_label(t.id);
  engine_->control([&](Scheduler& s) { e = s.evict_tenant(label, pins); });
  json::object by_tier{{"device", e.evicted}};
  if (tiers_.host) by_tier["host"] = tiers_.host->evict_tenant(label);
  if (tiers_.disk) by_tier["disk"] = tiers_.disk->evict_tenant(label);
  // Redis keys name the scope's tag, not the tenant: the scope it caches under (its org's when shared).
  if (tiers_.redis) by_tier["redis"] = tiers_.redis->evict_scope(serving::tenant_identity(tenancy_.tenants(), t).scope);
  serving::send_json(c.reply, 200,
                     {{"tenant", t.id}, {"evicted_blocks", e.evicted}, {"evicted_blocks_by_tier", std::move(by_tier)},
                      {"unpinned_blocks", e.unpinned}});
}

void AdminApi::pin(const Call& c) {
  const tenancy::Tenant t = tenancy_.tenants().get(c.params[0]);
  const json::object o = body_of(c.req);
  const openai::FieldReader f(o, "");
  const int64_t ttl = f.integer("ttl_s").value_or(300);
  if (ttl < 1 || ttl > 86400) throw openai::invalid_value("ttl_s", "must be between 1 and 86400 seconds");
  serving::ServeRequest r;
  r.who = {t, "admin"};  // the operator's pin, billed to the tenant as a cache write
  r.request_id = "req_pin_" + serving::to_hex(tenancy::random_bytes(12));
  r.model = model_;
  const json::value* prompt = f.find("prompt");
  if (!prompt) throw openai::missing_parameter("prompt");
  if (prompt->is_string()) {
    r.prompt = tokenizer_.encode(prompt->as_string(), {.add_bos = true, .parse_special = false});
  } else if (prompt->is_array()) {
    for (const json::value& id : prompt->as_array()) {
      if (!id.is_int64() || id.as_int64() < 0 || id.as_int64() >= tokenizer_.n_vocab())
        throw openai::invalid_value("prompt", "token ids must be integers in [0, n_vocab)");
      r.prompt.push_back(static_cast<TokenId>(id.as_int64()));
    }
  } else {
    throw openai::invalid_type("prompt", "a string or an array of token ids", openai::json_kind_name(*prompt));
  }
  r.sampling.temperature = 0;
  r.max_tokens = 1;
  r.pins = {{static_cast<int32_t>(r.prompt.size()), std::chrono::seconds(ttl)}};
  auto started = pipeline_.start(std::move(r), std::make_shared<PinReply>(c.reply, ttl));
  if (const auto* no = std::get_if<serving::NotStarted>(&started)) {
    switch (no->why) {
      case serving::NotStarted::Why::kQuota: throw openai::rate_limited(no->message);
      case serving::NotStarted::Why::kBusy: throw openai::overloaded(no->message);
      case serving::NotStarted::Why::kUnavailable: throw openai::service_unavailable(no->message);
      case serving::NotStarted::Why::kBadRequest: throw openai::invalid_request(no->message, "prompt");
    }
  }
}

}  // namespace kvgate::admin
