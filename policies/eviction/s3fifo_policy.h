// S3-FIFO for KV blocks, with a small queue that sizes itself.
//
// Most prompt blocks are never reused (on the Mooncake conversation trace 76%
// of distinct blocks are seen once), and under LRU they push everything else
// out. Here a released block that has never been hit waits in a small FIFO
// and, unless a lookup reuses it there, leaves first; its content key goes to
// a ghost list. A block that was hit, or that comes back while its key is
// still a ghost (it was reused after all, only later), lives in the main
// queue, which is LRU by release. The ghost lists are keys only (8 bytes a
// block), so they can remember several times more blocks than the tier holds.
//
// How big the small queue should be depends on the capacity: when the cache
// is small, first-use blocks cannot be kept until their reuse and are better
// given up at once; when it is large, most of them can be. The share adapts
// as ARC's does, by marginal ghost hits: a block evicted from the small queue
// that returns within `window` x entries further small-queue evictions would
// have been a hit with a slightly larger small queue (the share grows by
// `step` entries); one evicted from the main queue that returns as soon is
// evidence for a larger main queue (the share shrinks).
//
// Based on Yang et al., "FIFO queues are all you need for cache eviction"
// (SOSP'23), adapted: entries are queued when released (not when inserted),
// since a referenced block is not a candidate and the pool releases a
// request's blocks tail first (so a chain's tail leaves before its head);
// the main queue is LRU by release rather than CLOCK.
#pragma once

#include <memory>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

struct S3FifoParams {
  double small = 0.1;   // the small queue's starting share of the tracked entries
  double ghost = 3.0;   // small-queue evictions remembered, as a multiple of the tracked entries
  double window = 0.5;  // a ghost hit adapts the share when it returns within window x entries evictions
  double step = 1.0;    // entries the small queue's target moves per such ghost hit
  bool adapt = true;    // false: the share stays at `small`
};

// Throws PolicyError for parameters out of range.
std::unique_ptr<EvictionPolicy> make_s3fifo_policy(const S3FifoParams& params = {});

}  // namespace kvgate::policies
