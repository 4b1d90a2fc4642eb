// The host, disk and Redis tiers' part of ServingMetrics: their state is
// read at scrape time from the tiers themselves (thread-safe), and what the
// engine restored from the scheduler's counters, copied at a step boundary.
// (The scheduler counts a block restored from Redis under "disk": the mover
// sees one store below the host.)
#include <boost/json.hpp>

#include "gateway/serving/serving_metrics.h"

namespace kvgate::serving {
namespace {

namespace json = boost::json;

uint64_t u64(int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(0, v)); }

}  // namespace

void ServingMetrics::collect_tiers(const RestoreCounters& restores, const cache::MoverStats& mover,
                                   std::map<std::string, std::string>& policies) {
  restores_.at({"host"}).set_total(u64(restores.blocks_from_host));
  restores_.at({"disk"}).set_total(u64(restores.blocks_from_disk));
  restored_bytes_.at({"host"}).set_total(u64(restores.bytes_from_host));
  restored_bytes_.at({"disk"}).set_total(u64(restores.bytes_from_disk));
  resumed_tokens_.at({"restored"}).set_total(u64(restores.resumed_restored_tokens));
  resumed_tokens_.at({"recomputed"}).set_total(u64(restores.resumed_recomputed_tokens));
  offloads_.at({"device"}).set_total(u64(mover.offloaded));
  if (!tiers_ || !(tiers_->host || tiers_->below_host)) return;
  const cache::KvIdentity& id = tiers_->host ? tiers_->host->identity() : tiers_->below_host->identity();
  const auto record = static_cast<int64_t>(cache::record_bytes(id));
  offloaded_bytes_.at({"device"}).set_total(u64(mover.offloaded * id.payload_bytes()));
  const auto tier = [&](const std::string& name, const cache::TierStats& s, const std::string& policy) {
    policies[name] = policy;
    kv_blocks_.at({name, "in_use"}).set(static_cast<double>(s.pinned));
    kv_blocks_.at({name, "cached"}).set(static_cast<double>(s.blocks - s.pinned));
    kv_capacity_.at({name}).set(static_cast<double>(s.capacity_bytes));
    kv_usage_.at({name}).set(s.capacity_bytes > 0 ? static_cast<double>(s.used_bytes) / s.capacity_bytes : 0.0);
    evictions_.at({name}).set_total(u64(s.evicted));
    tier_refused_.at({name}).set_total(u64(s.refused));
    for (int f = 1; f < cache::kRecordFaultCount; ++f)  // every reason from the start, at 0
      tier_faults_.at({name, std::string(cache::fault_name(static_cast<cache::RecordFault>(f)))});
    for (const auto& [reason, n] : s.faults) tier_faults_.at({name, reason}).set_total(u64(n));
    std::map<std::string, int64_t> by_tenant;  // labels of one tenant (rotated scopes) summed
    for (const auto& [label, n] : s.tenant_blocks) by_tenant[tenant_of(label)] += n;
    tier_tenant_blocks_.each([&](std::span<const std::string> l, metrics::Gauge& g) {
      if (l[0] == name && !by_tenant.contains(l[1])) g.set(0);
    });
    for (const auto& [tenant, n] : by_tenant) tier_tenant_blocks_.at({name, tenant}).set(static_cast<double>(n));
  };
  if (tiers_->host) tier("host", tiers_->host->stats(), tiers_->host->policy_name());
  if (tiers_->disk) {
    const cache::TierStats s = tiers_->disk->stats();
    tier("disk", s, tiers_->disk->policy_name());
    offloads_.at({"host"}).set_total(u64(s.persisted));  // what went below the host, to RocksDB
    offloaded_bytes_.at({"host"}).set_total(u64(s.persisted * record));
    persisted_.at({}).set_total(u64(s.persisted));
    tier_write_errors_.at({"disk"}).set_total(u64(s.write_errors));
  }
  if (tiers_->redis) {  // Redis's occupancy and evictions are its own (INFO): only what this replica saw
    const cache::TierStats s = tiers_->redis->stats().tier;
    tier_refused_.at({"redis"}).set_total(u64(s.refused));
    tier_write_errors_.at({"redis"}).set_total(u64(s.write_errors));
    for (int f = 1; f < cache::kRecordFaultCount; ++f)
      tier_faults_.at({"redis", std::string(cache::fault_name(static_cast<cache::RecordFault>(f)))});
    for (const auto& [reason, n] : s.faults) tier_faults_.at({"redis", reason}).set_total(u64(n));
    if (!tiers_->disk) {  // instead of the disk tier: what went below the host went to Redis
      offloads_.at({"host"}).set_total(u64(s.persisted));
      offloaded_bytes_.at({"host"}).set_total(u64(s.persisted * record));
    }
  }
}

json::array ServingMetrics::tier_rows() const {
  json::array rows;
  if (!tiers_) return rows;
  const auto row = [&](const char* name, const cache::TierStats& s, const cache::KvIdentity& id) {
    const auto record = static_cast<int64_t>(cache::record_bytes(id));
    rows.push_back(json::object{
        {"tier", name},
        {"blocks_total", s.capacity_bytes / record},
        {"blocks_in_use", s.pinned},
        {"blocks_cached", s.blocks - s.pinned},
        {"blocks_free", std::max<int64_t>(0, s.capacity_bytes / record - s.blocks)},
        {"usage_ratio", s.capacity_bytes > 0 ? static_cast<double>(s.used_bytes) / s.capacity_bytes : 0.0},
        {"capacity_bytes", s.capacity_bytes}});
  };
  if (tiers_->host) row("host", tiers_->host->stats(), tiers_->host->identity());
  if (tiers_->disk) row("disk", tiers_->disk->stats(), tiers_->disk->identity());
  return rows;
}

}  // namespace kvgate::serving
