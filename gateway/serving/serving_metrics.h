// ServingMetrics: the kvgate_ metric families of `kvgate serve`
// (docs/metrics.md), what moves them, and the two views read off them:
// the Prometheus exposition (/metrics) and the dashboard's JSON
// (/dashboard/data).
//
// Request figures are added once per request, when it ends, from the same
// TokenUsage and cost its ledger record holds, so per-tenant totals here
// equal the ledger's. Engine state (KV blocks, running and waiting
// requests, preemptions, the prefix cache's own counters) is copied in by
// collect() at scrape time from what the engine loop last published
// (Engine::stats(): at most Engine::kStatsInterval old while it steps, and
// holding every request whose completion anyone has seen): nothing here runs
// on the engine loop or waits for it.
//
// Threads: finished() on a BlockingPool thread; started(), refused() and
// busy() on I/O threads; collect() and the views anywhere. Increments are lock-free
// atomics; a series' first use takes its family's mutex.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/finish_reason.h"
#include "base/mutex.h"
#include "engine/sched/engine.h"
#include "engine/sched/request_timing.h"
#include "gateway/metrics/registry.h"
#include "gateway/serving/kv_tiers.h"
#include "tenancy/quota.h"
#include "tenancy/tenancy.h"
#include "tenancy/usage.h"

namespace kvgate::serving {

class ServingMetrics {
 public:
  // `device_capacity_bytes`: the KV budget of the engine's pool.
  ServingMetrics(std::string model, int64_t device_capacity_bytes);

  // A request for `tenant` was handed to the engine under `label`: the
  // engine's prefix-cache counters are keyed by the label, the metrics by
  // the tenant id.
  void started(const std::string& tenant, TenantId label);
  // A started request ended. `billed` and `cost_micros` are its ledger
  // record's (zero when it was cancelled before the engine ran it);
  // `uncached_cost_micros` prices its cached tokens as fresh.
  void finished(const std::string& tenant, FinishReason finish, const tenancy::TokenUsage& billed,
                uint64_t cost_micros, uint64_t uncached_cost_micros, const RequestTiming& timing);
  void refused(const std::string& tenant, tenancy::Limit limit);  // 429
  void busy();                                                    // 503
  // A reply to a chat that offered tools was read by `parser` (hermes,
  // llama3, generic): `outcome` "calls", "text", or "unparsed".
  void tool_reply(const std::string& tenant, std::string_view parser, std::string_view outcome);
  // A request whose output is held to a grammar, by `kind` (json_object,
  // json_schema, tool_call), counted once the engine has it.
  void structured_output(const std::string& tenant, std::string_view kind);

  // The host and disk tiers whose state collect() copies too; they must
  // outlive this. Not called: the device tier only.
  void watch(const KvTiers& tiers) { tiers_ = &tiers; }
  // Copies the engine's state as last published into the gauges; never
  // waits. A request whose completion the caller has seen is in it.
  void collect(const Engine& engine);
  // The ledger's records held while it could not write (tenancy/held_records.h),
  // and its group commit's counts.
  void collect_ledger(tenancy::Tenancy& tenancy);

  std::string exposition() const { return registry_.expose(); }
  // For families of a process's own beside these (a route front's).
  metrics::Registry& registry() { return registry_; }
  // Every tenant's figures and the server's (nullopt), or one tenant's
  // alone, never another's.
  boost::json::object dashboard(const std::optional<std::string>& tenant) const;

 private:
  std::string tenant_of(TenantId label) const;
  // The host and disk tiers' part of collect() (serving_tier_metrics.cpp).
  void collect_tiers(const RestoreCounters& restores, const cache::MoverStats& mover,
                     std::map<std::string, std::string>& policies);
  boost::json::array tier_rows() const;

  const std::string model_;
  const int64_t device_capacity_bytes_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  metrics::Registry registry_;
  metrics::Family<metrics::Counter>& requests_;
  metrics::Family<metrics::Counter>& prompt_tokens_;
  metrics::Family<metrics::Counter>& cached_tokens_;
  metrics::Family<metrics::Counter>& fresh_tokens_;
  metrics::Family<metrics::Counter>& output_tokens_;
  metrics::Family<metrics::Counter>& cost_;
  metrics::Family<metrics::Counter>& uncached_cost_;
  metrics::Family<metrics::Counter>& cache_queries_;
  metrics::Family<metrics::Counter>& cache_hits_;
  metrics::Family<metrics::Histogram>& ttft_;
  metrics::Family<metrics::Histogram>& itl_;
  metrics::Family<metrics::Histogram>& tpot_;
  metrics::Family<metrics::Histogram>& e2e_;
  metrics::Family<metrics::Histogram>& queue_;
  metrics::Family<metrics::Gauge>& kv_blocks_;
  metrics::Family<metrics::Gauge>& kv_usage_;
  metrics::Family<metrics::Gauge>& kv_capacity_;
  metrics::Family<metrics::Gauge>& kv_pinned_;
  metrics::Family<metrics::Gauge>& policy_info_;
  metrics::Family<metrics::Gauge>& running_;
  metrics::Family<metrics::Gauge>& waiting_;
  metrics::Family<metrics::Counter>& preemptions_;
  metrics::Family<metrics::Gauge>& ledger_pending_;
  metrics::Family<metrics::Counter>& ledger_held_;
  metrics::Family<metrics::Counter>& ledger_dropped_;
  metrics::Family<metrics::Counter>& ledger_commits_;
  metrics::Family<metrics::Counter>& ledger_records_;
  metrics::Family<metrics::Counter>& evictions_;
  metrics::Family<metrics::Counter>& offloads_;
  metrics::Family<metrics::Counter>& restores_;
  metrics::Family<metrics::Counter>& restored_bytes_;
  metrics::Family<metrics::Counter>& offloaded_bytes_;
  metrics::Family<metrics::Counter>& tier_faults_;
  metrics::Family<metrics::Counter>& tier_refused_;
  metrics::Family<metrics::Counter>& tier_write_errors_;
  metrics::Family<metrics::Counter>& persisted_;
  metrics::Family<metrics::Gauge>& tier_tenant_blocks_;
  metrics::Family<metrics::Counter>& resumed_tokens_;
  metrics::Family<metrics::Counter>& refusals_;
  metrics::Family<metrics::Counter>& busy_;
  metrics::Family<metrics::Counter>& tool_replies_;
  metrics::Family<metrics::Counter>& structured_;

  const KvTiers* tiers_ = nullptr;
  mutable Mutex labels_mu_;
  std::map<TenantId, std::string> tenant_by_label_ ABSL_GUARDED_BY(labels_mu_);
};

}  // namespace kvgate::serving
