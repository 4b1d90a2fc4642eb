// The KV tiers of a serving process: the host tier, the RocksDB disk tier
// under <data.dir>/kv and the Redis tier the replicas share, opened from
// [kv_tiers] with the engine's cache identity, before the engine starts.
// The engine reaches them through the mover (cache/tiers/tier_mover.h),
// which sees one store below the host: the disk tier, the Redis tier, or
// the two stacked (stacked_store.h); the admin routes and the metrics reach
// each here (every tier is thread-safe).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cache/tiers/disk_tier.h"
#include "cache/tiers/host_tier.h"
#include "cache/tiers/redis_tier.h"
#include "cache/tiers/tier_mover.h"
#include "gateway/config/server_config.h"
#include "gateway/serving/kv_sizes.h"

namespace kvgate::serving {

struct KvTiers {
  std::shared_ptr<cache::HostTier> host;  // null: no host tier
  std::shared_ptr<cache::DiskTier> disk;  // null: no disk tier
  std::shared_ptr<cache::RedisTier> redis;  // null: no Redis tier
  std::shared_ptr<cache::BlockStore> below_host;  // what the mover reads and writes below the host tier

  cache::LowerTiers lower() const { return {host, below_host}; }
  // The tiers with an eviction policy, as the admin API names them ("host",
  // "disk"), present ones only (Redis evicts by its own maxmemory-policy).
  std::vector<std::string> names() const;
};

// Opens the configured tiers, the host and disk ones at `sizes` (a tier
// whose size is below one record is left out). Throws kvgate::Error naming the directory when
// the disk tier will not open (unless kv_tiers.move_aside_corrupt). A Redis
// that is down is no error: its tier misses until it answers.
// `events`, when given, is told what the host and disk tiers store and
// remove (the disk's existing blocks as it opens) and must outlive them.
KvTiers open_kv_tiers(const config::ServerConfig& c, const KvSizes& sizes, const cache::KvIdentity& identity,
                      cache::BlockEventListener* events = nullptr);

// One line per tier for the start-up report: capacity in blocks and tokens,
// why it is that size, policy, and for the disk what was found there.
std::vector<std::string> describe(const KvTiers& t, const KvSizes& sizes, const cache::KvIdentity& identity);

}  // namespace kvgate::serving
