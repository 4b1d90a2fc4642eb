// A tenant's cache quota on the device pool (Submitter::cache_quota_blocks):
// one check, shared by the two ways a block gets cached there, a commit of
// a block the scheduler filled and a restore of one found below the device.
#pragma once

#include <cstdint>

#include "cache/block_pool.h"
#include "engine/submitter.h"

namespace kvgate {

// Whether `who`'s tenant may cache one more block on the device, beyond
// `pending` of its blocks about to be committed: under its quota, or at it
// and able to give up one of its own (not held or pinned). At the quota,
// that block is evicted here, to make the room the answer promises.
inline bool room_in_cache_quota(cache::BlockPool& pool, const Submitter& who, int64_t pending = 0) {
  const int64_t quota = who.cache_quota_blocks;
  return quota <= 0 || pool.cached_blocks(who.tenant) + pending < quota || pool.evict_one_of(who.tenant);
}

}  // namespace kvgate
