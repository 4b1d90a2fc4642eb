// TierStats: one tier's counters and occupancy (host or disk), for metrics
// and the admin API. A snapshot, copied out under the tier's lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "policies/ids.h"

namespace kvgate::cache {

struct TierStats {
  int64_t capacity_bytes = 0, used_bytes = 0, blocks = 0;
  int64_t pinned = 0;        // host: entries held by a lease now; disk: 0
  int64_t stored = 0;        // records put (host: published; disk: accepted by enqueue)
  int64_t refused = 0;       // puts refused: full of pinned entries / write queue full / write error
  int64_t evicted = 0, hits = 0, misses = 0;
  std::map<std::string, int64_t> faults;   // by fault_name: integrity failures (each dropped the entry)
  int64_t write_errors = 0;  // disk only: failed RocksDB writes (each dropped its batch's records)
  int64_t persisted = 0;     // disk only: records acknowledged durable (written to RocksDB) since open
  int64_t foreign = 0;       // disk only: entries of another identity found at open (ignored) and not purged since
  int64_t queued = 0, queued_bytes = 0;  // disk only: records waiting for (or being written by) the writer
  std::map<TenantId, int64_t> tenant_blocks;   // occupancy per tenant (entries stored; host: published)
};

}  // namespace kvgate::cache
