#include "gateway/serving/serving_metrics.h"

#include <boost/json.hpp>

#include <algorithm>

namespace kvgate::serving {
namespace {

namespace json = boost::json;
using metrics::Counter;
using metrics::FamilyInfo;
using metrics::Histogram;

// vLLM's bucket boundaries (vllm/v1/metrics/loggers.py), so that dashboards
// and SLOs written for vLLM read kvgate's histograms the same way.
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,   0.75,
                                          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160., 640.0, 2560.0};
const std::vector<double> kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5,  10.0, 20.0, 40.0, 80.0};
const std::vector<double> kLatencyBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
                                             30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

constexpr std::string_view kTiers[] = {"device", "host", "disk"};
constexpr tenancy::Limit kLimits[] = {tenancy::Limit::kRequestsPerMinute, tenancy::Limit::kTokensPerMinute,
                                      tenancy::Limit::kConcurrentRequests, tenancy::Limit::kMonthlySpend,
                                      tenancy::Limit::kKvBlocks, tenancy::Limit::kPinnedBlocks,
                                      tenancy::Limit::kServerPinnedBlocks};

FamilyInfo info(std::string name, std::string help, std::vector<std::string> labels = {}, int decimals = 0) {
  return {std::move(name), std::move(help), std::move(labels), decimals};
}

double seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }
bool reached(SteadyClock::time_point t) { return t != SteadyClock::time_point{}; }

double usd(uint64_t micros) { return static_cast<double>(micros) / 1e6; }

// Sums a counter family's series whose labels pass `keep`.
template <class Keep>
uint64_t sum_where(const metrics::Family<Counter>& f, Keep keep) {
  uint64_t total = 0;
  f.each([&](std::span<const std::string> labels, const Counter& c) {
    if (keep(labels)) total += c.value();
  });
  return total;
}

// A histogram family summed over its series (one per model).
json::object histogram_json(const metrics::Family<Histogram>& f, const std::vector<double>& bounds) {
  std::vector<uint64_t> counts(bounds.size() + 1, 0);
  double sum = 0;
  f.each([&](std::span<const std::string>, const Histogram& h) {
    const std::vector<uint64_t> c = h.cumulative_counts();
    for (size_t i = 0; i < c.size(); ++i) counts[i] += c[i];
    sum += h.sum();
  });
  json::array le(bounds.begin(), bounds.end()), cs(counts.begin(), counts.end());
  return {{"le", std::move(le)}, {"counts", std::move(cs)}, {"count", counts.back()}, {"sum", sum}};
}

}  // namespace

ServingMetrics::ServingMetrics(std::string model, int64_t device_capacity_bytes)
    : model_(std::move(model)),
      device_capacity_bytes_(device_capacity_bytes),
      requests_(registry_.counter(info("kvgate_requests_total", "Requests the engine admitted, by how they ended.",
                                       {"tenant", "model", "finish_reason"}))),
      prompt_tokens_(registry_.counter(info("kvgate_prompt_tokens_total", "Prompt tokens of finished requests.",
                                            {"tenant", "model"}))),
      cached_tokens_(registry_.counter(info("kvgate_cached_prompt_tokens_total",
                                            "Prompt tokens served from the KV cache, by the tier they came from.",
                                            {"tenant", "model", "tier"}))),
      fresh_tokens_(registry_.counter(info("kvgate_fresh_prefill_tokens_total", "Prompt tokens prefilled fresh.",
                                           {"tenant", "model"}))),
      output_tokens_(registry_.counter(info("kvgate_output_tokens_total", "Generated tokens.", {"tenant", "model"}))),
      cost_(registry_.counter(info("kvgate_cost_usd_total", "What tenants were billed, in US dollars (the ledger's cost).",
                                   {"tenant"}, 6))),
      uncached_cost_(registry_.counter(
          info("kvgate_cost_without_cache_usd_total",
               "What the same requests would cost with every cached token priced as fresh, in US dollars.", {"tenant"},
               6))),
      cache_queries_(registry_.counter(info("kvgate_prefix_cache_queries_tokens_total",
                                            "Prompt tokens looked up in the prefix cache.", {"tenant"}))),
      cache_hits_(registry_.counter(info("kvgate_prefix_cache_hits_tokens_total",
                                         "Prompt tokens found in the prefix cache.", {"tenant"}))),
      ttft_(registry_.histogram(info("kvgate_time_to_first_token_seconds", "Arrival to first output token.", {"model"}),
                                kTtftBuckets)),
      itl_(registry_.histogram(info("kvgate_inter_token_latency_seconds", "Gaps between consecutive output tokens.",
                                    {"model"}),
                               kItlBuckets)),
      tpot_(registry_.histogram(info("kvgate_time_per_output_token_seconds",
                                     "Per request, (last token - first token) / (output tokens - 1).", {"model"}),
                                kItlBuckets)),
      e2e_(registry_.histogram(info("kvgate_e2e_request_latency_seconds", "Arrival to finish.", {"model"}),
                               kLatencyBuckets)),
      queue_(registry_.histogram(info("kvgate_request_queue_time_seconds",
                                      "Arrival to admission by the scheduler.", {"model"}),
                                 kLatencyBuckets)),
      kv_blocks_(registry_.gauge(info("kvgate_kv_blocks", "KV blocks by state: in_use, cached (evictable), free.",
                                      {"tier", "state"}))),
      kv_usage_(registry_.gauge(info("kvgate_kv_usage_ratio", "KV blocks in use / blocks in the tier.", {"tier"}))),
      kv_capacity_(registry_.gauge(info("kvgate_kv_capacity_bytes", "The KV tier's capacity.", {"tier"}))),
      kv_pinned_(registry_.gauge(info("kvgate_kv_pinned_blocks", "KV blocks held by pins (a subset of in_use).", {"tier"}))),
      policy_info_(registry_.gauge(info("kvgate_eviction_policy_info",
                                        "1 for the tier's eviction policy now, 0 for those it had before.",
                                        {"tier", "policy"}))),
      running_(registry_.gauge(info("kvgate_requests_running", "Requests the scheduler is running."))),
      waiting_(registry_.gauge(info("kvgate_requests_waiting", "Requests submitted and waiting for admission."))),
      preemptions_(registry_.counter(info("kvgate_preemptions_total", "Running requests preempted (recomputed later)."))),
      ledger_pending_(registry_.gauge(info("kvgate_ledger_pending_records",
                                           "Finished requests' records the ledger could not write yet; while any "
                                           "is pending no request is admitted."))),
      ledger_held_(registry_.counter(
          info("kvgate_ledger_held_records_total", "Records held in memory because the ledger could not write."))),
      ledger_dropped_(registry_.counter(info("kvgate_ledger_dropped_records_total",
                                             "Held records never written (past the capacity, or at shutdown), "
                                             "printed to stderr instead."))),
      ledger_commits_(registry_.counter(
          info("kvgate_ledger_commits_total", "Synced writes of the ledger (each one fsync, carrying a group of records)."))),
      ledger_records_(registry_.counter(info("kvgate_ledger_records_total",
                                             "Ledger records written; divided by kvgate_ledger_commits_total, the "
                                             "records each sync carried (group commit)."))),
      evictions_(registry_.counter(info("kvgate_kv_evictions_blocks_total", "Cached blocks dropped from a tier.", {"tier"}))),
      offloads_(registry_.counter(info("kvgate_kv_offloads_blocks_total",
                                       "Blocks copied down from a tier to the one below.", {"tier"}))),
      restores_(registry_.counter(info("kvgate_kv_restores_blocks_total", "Blocks copied up from a tier on a hit.",
                                       {"tier"}))),
      restored_bytes_(registry_.counter(info("kvgate_kv_restores_bytes_total",
                                             "Bytes copied up into the device from a tier on a hit.", {"tier"}))),
      offloaded_bytes_(registry_.counter(info("kvgate_kv_offloads_bytes_total",
                                              "Bytes copied down from a tier to the one below.", {"tier"}))),
      tier_faults_(registry_.counter(info("kvgate_kv_tier_faults_total",
                                          "Stored blocks that failed verification (checksum, identity, key or "
                                          "tokens): dropped, and prefilled instead.",
                                          {"tier", "reason"}))),
      tier_refused_(registry_.counter(info("kvgate_kv_tier_refused_blocks_total",
                                           "Blocks a tier did not take: no room (every entry in use), its write "
                                           "queue full, or a failed write.",
                                           {"tier"}))),
      tier_write_errors_(registry_.counter(info("kvgate_kv_tier_write_errors_total",
                                                "Failed writes to a tier (disk full, I/O error); the server keeps "
                                                "serving.",
                                                {"tier"}))),
      persisted_(registry_.counter(
          info("kvgate_kv_persisted_blocks_total", "Blocks written to the disk tier and acknowledged since start."))),
      tier_tenant_blocks_(registry_.gauge(info("kvgate_kv_tier_tenant_blocks", "Blocks a tenant holds in a tier.",
                                               {"tier", "tenant"}))),
      resumed_tokens_(registry_.counter(info("kvgate_preempted_resume_tokens_total",
                                             "Positions of preempted requests at resumption, by how they came back: "
                                             "restored from a tier or recomputed.",
                                             {"how"}))),
      refusals_(registry_.counter(info("kvgate_quota_refusals_total", "Requests refused with 429, by the limit.",
                                       {"tenant", "limit"}))),
      busy_(registry_.counter(info("kvgate_engine_busy_refusals_total",
                                   "Requests refused with 503: the engine's queue was full."))),
      tool_replies_(registry_.counter(info("kvgate_tool_calls_total",
                                           "Replies of chats that offered tools, by the parser that read them and "
                                           "what it found: calls, text, or a call that did not parse.",
                                           {"tenant", "parser", "outcome"}))),
      structured_(registry_.counter(info("kvgate_structured_output_requests_total",
                                         "Requests whose output was held to a grammar by constrained decoding, by "
                                         "kind: json_object, json_schema, or a forced tool_call.",
                                         {"tenant", "kind"}))) {
  // Series that exist from the start, so that a scrape before any traffic
  // already shows every server-wide family (per-tenant ones appear with
  // their tenant's first request).
  for (auto* f : {&ttft_, &itl_, &tpot_, &e2e_, &queue_}) f->at({model_});
  running_.at({});
  waiting_.at({});
  preemptions_.at({});
  busy_.at({});
  evictions_.at({"device"});
  offloads_.at({"device"});
  resumed_tokens_.at({"restored"});
  resumed_tokens_.at({"recomputed"});
  kv_capacity_.at({"device"}).set(static_cast<double>(device_capacity_bytes_));
}

void ServingMetrics::started(const std::string& tenant, TenantId label) {
  MutexLock lock(labels_mu_);
  tenant_by_label_.try_emplace(label, tenant);
}

void ServingMetrics::finished(const std::string& tenant, FinishReason finish, const tenancy::TokenUsage& billed,
                              uint64_t cost_micros, uint64_t uncached_cost_micros, const RequestTiming& t) {
  requests_.at({tenant, model_, finish_reason_name(finish)}).add();
  prompt_tokens_.at({tenant, model_}).add(billed.prompt_tokens);
  cached_tokens_.at({tenant, model_, "device"}).add(billed.cached_device);
  cached_tokens_.at({tenant, model_, "host"}).add(billed.cached_host);
  cached_tokens_.at({tenant, model_, "disk"}).add(billed.cached_disk);
  fresh_tokens_.at({tenant, model_}).add(billed.fresh_prefill);
  output_tokens_.at({tenant, model_}).add(billed.output_tokens);
  cost_.at({tenant}).add(cost_micros);
  uncached_cost_.at({tenant}).add(uncached_cost_micros);

  if (reached(t.first_token)) ttft_.at({model_}).observe(seconds(t.first_token - t.arrival));
  Histogram& itl = itl_.at({model_});
  for (size_t i = 1; i < t.token_times.size(); ++i) itl.observe(seconds(t.token_times[i] - t.token_times[i - 1]));
  if (t.token_times.size() >= 2) tpot_.at({model_}).observe(tpot_ms(t) / 1e3);
  if (reached(t.finished)) e2e_.at({model_}).observe(seconds(t.finished - t.arrival));
  if (reached(t.admitted)) queue_.at({model_}).observe(seconds(t.admitted - t.arrival));
}

void ServingMetrics::refused(const std::string& tenant, tenancy::Limit limit) {
  refusals_.at({tenant, tenancy::limit_name(limit)}).add();
}

void ServingMetrics::busy() { busy_.at({}).add(); }

void ServingMetrics::tool_reply(const std::string& tenant, std::string_view parser, std::string_view outcome) {
  tool_replies_.at({tenant, std::string(parser), std::string(outcome)}).add();
}

void ServingMetrics::structured_output(const std::string& tenant, std::string_view kind) {
  structured_.at({tenant, std::string(kind)}).add();
}

std::string ServingMetrics::tenant_of(TenantId label) const {
  MutexLock lock(labels_mu_);
  const auto it = tenant_by_label_.find(label);
  return it != tenant_by_label_.end() ? it->second : std::string(metrics::kOverflowLabel);
}

void ServingMetrics::collect_ledger(tenancy::Tenancy& tenancy) {
  const tenancy::HeldRecordsStats held = tenancy.held_stats();
  const tenancy::GroupCommitStats commits = tenancy.ledger().stats();
  ledger_commits_.at({}).set_total(commits.commits);
  ledger_records_.at({}).set_total(commits.records);
  ledger_pending_.at({}).set(static_cast<double>(held.pending));
  ledger_held_.at({}).set_total(held.held);
  ledger_dropped_.at({}).set_total(held.dropped);
}

void ServingMetrics::collect(const Engine& engine) {
  const std::shared_ptr<const EngineStats> published = engine.stats();
  const EngineStats& stats = *published;
  const cache::CacheStats& st = stats.cache;
  const int64_t running = stats.running;
  std::map<std::string, std::string> policies{{"device", stats.policy}};
  collect_tiers(stats.restores, stats.mover, policies);
  for (const auto& [tier, name] : policies) policy_info_.at({tier, name});
  policy_info_.each([&](std::span<const std::string> l, metrics::Gauge& g) { g.set(policies[l[0]] == l[1] ? 1 : 0); });
  kv_pinned_.at({"device"}).set(st.blocks_pinned);
  // Waiting: submitted and not running, including what is still in the
  // engine's inbox (outstanding counts from submit()).
  running_.at({}).set(static_cast<double>(running));
  waiting_.at({}).set(static_cast<double>(std::max<int64_t>(0, engine.outstanding() - running)));
  preemptions_.at({}).set_total(static_cast<uint64_t>(engine.preemptions()));
  kv_blocks_.at({"device", "in_use"}).set(st.blocks_in_use);
  kv_blocks_.at({"device", "cached"}).set(st.blocks_cached_free);
  kv_blocks_.at({"device", "free"}).set(st.blocks_free);
  kv_usage_.at({"device"}).set(st.blocks_total > 0 ? static_cast<double>(st.blocks_in_use) / st.blocks_total : 0.0);
  evictions_.at({"device"}).set_total(static_cast<uint64_t>(st.all.evictions));
  // Per tenant, from the pool's own counters: requests that never reached
  // the pool (refused, cancelled in the inbox) looked nothing up.
  std::map<std::string, cache::TenantCacheStats> by_tenant;
  for (const auto& [label, ts] : st.tenants) {
    cache::TenantCacheStats& sum = by_tenant[tenant_of(label)];
    sum.query_tokens += ts.query_tokens;
    sum.hit_tokens += ts.hit_tokens;
  }
  for (const auto& [tenant, ts] : by_tenant) {
    cache_queries_.at({tenant}).set_total(static_cast<uint64_t>(ts.query_tokens));
    cache_hits_.at({tenant}).set_total(static_cast<uint64_t>(ts.hit_tokens));
  }
}

json::object ServingMetrics::dashboard(const std::optional<std::string>& only) const {
  // Tenants known to any per-tenant family, so a tenant refused before its
  // first request still shows its refusals.
  std::vector<std::string> tenants;
  auto note = [&](const metrics::Family<Counter>& f) {
    f.each([&](std::span<const std::string> labels, const Counter&) { tenants.push_back(labels[0]); });
  };
  for (const auto* f : {&requests_, &cost_, &refusals_, &cache_queries_}) note(*f);
  std::sort(tenants.begin(), tenants.end());
  tenants.erase(std::unique(tenants.begin(), tenants.end()), tenants.end());

  json::array rows;
  for (const std::string& tenant : tenants) {
    if (only && tenant != *only) continue;
    if (tenant == metrics::kOverflowLabel) continue;  // not a tenant: the overflow series of many
    auto of = [&](const metrics::Family<Counter>& f) {
      return sum_where(f, [&](std::span<const std::string> l) { return l[0] == tenant; });
    };
    json::object cached;
    for (const std::string_view tier : kTiers)
      cached[tier] = sum_where(cached_tokens_, [&](std::span<const std::string> l) { return l[0] == tenant && l[2] == tier; });
    json::object refusals;
    for (const tenancy::Limit lim : kLimits) {
      const std::string_view name = tenancy::limit_name(lim);
      refusals[name] = sum_where(refusals_, [&](std::span<const std::string> l) { return l[0] == tenant && l[1] == name; });
    }
    rows.push_back(json::object{{"tenant", tenant},
                                {"requests", of(requests_)},
                                {"prompt_tokens", of(prompt_tokens_)},
                                {"cached_tokens", std::move(cached)},
                                {"fresh_prefill_tokens", of(fresh_tokens_)},
                                {"output_tokens", of(output_tokens_)},
                                {"cost_usd", usd(of(cost_))},
                                {"cost_without_cache_usd", usd(of(uncached_cost_))},
                                {"prefix_cache_queries_tokens", of(cache_queries_)},
                                {"prefix_cache_hits_tokens", of(cache_hits_)},
                                {"quota_refusals", std::move(refusals)}});
  }

  json::object out{{"scope", only ? "tenant" : "admin"}};
  if (only) out["tenant"] = *only;
  out["model"] = model_;
  out["uptime_s"] = seconds(std::chrono::steady_clock::now() - started_at_);
  out["tenants"] = std::move(rows);
  if (only) return out;

  out["latency"] = json::object{{"ttft_s", histogram_json(ttft_, kTtftBuckets)},
                                {"itl_s", histogram_json(itl_, kItlBuckets)},
                                {"tpot_s", histogram_json(tpot_, kItlBuckets)},
                                {"e2e_s", histogram_json(e2e_, kLatencyBuckets)},
                                {"queue_s", histogram_json(queue_, kLatencyBuckets)}};
  auto gauge = [](const metrics::Family<metrics::Gauge>& f, std::initializer_list<std::string_view> labels) {
    double v = 0;
    f.each([&](std::span<const std::string> l, const metrics::Gauge& g) {
      if (std::equal(l.begin(), l.end(), labels.begin(), labels.end())) v = g.value();
    });
    return v;
  };
  const auto in_use = static_cast<int64_t>(gauge(kv_blocks_, {"device", "in_use"}));
  const auto cached = static_cast<int64_t>(gauge(kv_blocks_, {"device", "cached"}));
  const auto free = static_cast<int64_t>(gauge(kv_blocks_, {"device", "free"}));
  out["kv"] = json::array{json::object{{"tier", "device"},
                                       {"blocks_total", in_use + cached + free},
                                       {"blocks_in_use", in_use},
                                       {"blocks_cached", cached},
                                       {"blocks_free", free},
                                       {"usage_ratio", gauge(kv_usage_, {"device"})},
                                       {"capacity_bytes", device_capacity_bytes_}}};
  for (json::value& row : tier_rows()) out["kv"].as_array().push_back(std::move(row));
  out["requests_running"] = static_cast<int64_t>(gauge(running_, {}));
  out["requests_waiting"] = static_cast<int64_t>(gauge(waiting_, {}));
  auto total = [](const metrics::Family<Counter>& f) { return sum_where(f, [](auto) { return true; }); };
  out["preemptions"] = total(preemptions_);
  out["engine_busy_refusals"] = total(busy_);
  auto per_tier = [](const metrics::Family<Counter>& f) {
    json::object o;
    f.each([&](std::span<const std::string> l, const Counter& c) { o[l[0]] = c.value(); });
    return o;
  };
  out["evictions_blocks"] = per_tier(evictions_);
  out["offloads_blocks"] = per_tier(offloads_);
  out["restores_blocks"] = per_tier(restores_);
  return out;
}

}  // namespace kvgate::serving
