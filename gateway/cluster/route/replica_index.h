// ReplicaIndex: what every replica behind a front holds, by tier, learnt
// from the block events the replicas publish; and, for a request's chain of
// block hashes, how many of its leading blocks each replica holds, by the
// tier it would serve them from. What the cache-aware router scores.
//
// Events (per replica, each idempotent, applied in any order):
//   stored(r, hash, tier)       the block is now in that tier of r
//   removed(r, hash, tier)      it is no longer there (unknown: nothing)
//   moved(r, hash, from, to)    removed from `from`, stored in `to`
//   cleared(r)                  r holds nothing (a restart, a resync)
// and for the cluster's shared tier (one store all replicas restore from):
//   shared_stored(hash), shared_removed(hash), shared_cleared().
// A replica's events carry the block's parent link too; the index does not
// need it: a lookup follows the request's own chain from its head, so a
// block only counts for a replica that holds the blocks before it, and a
// block stored before its parent (or left behind by an evicted parent)
// counts again once the parent is back.
//
// The lookup is a search, not a walk (why: a 100k-token prompt is 6k
// blocks, one cache miss each in a table of 64M entries). A replica's cache
// holds prefixes (blocks leave tail-first: a child is not resident without
// its parent), and a prefix's tiers run device, then host, then disk, so a
// chain's state, each replica's tier or none block by block, is a few runs.
// lookup() probes blocks 0, 1, 3, 7, ..., 2^k - 1 until no replica holds the
// probed block (or the chain ends), then bisects every interval whose two
// ends differ in state (which replicas hold it, in which tier) and credits
// an interval whose ends agree whole with that state: O(runs x log n)
// probes, ~30 for a 6k-block chain instead of 6k. Exact on prefix-shaped
// data. Where a replica's holdings are not a prefix (a middle block evicted
// first, an S3-FIFO victim; a tier order broken), the estimate takes a hole
// between two probed blocks the replica holds in one tier for held: it can
// only overcount blocks (never undercount) and misplace them between tiers.
// That costs hit rate, never correctness: the replica verifies every block
// itself and prefills what it lacks. lookup_exact() walks every block, one
// probe each, for what needs the exact count.
//
// Sequence numbers, instances and digests are the event stream's, not the
// index's: the subscriber (event_subscriber.h) checks them per replica.
//
// Layout (why it is fast and small): one global hash table keyed by the
// block hash's low 64 bits (XXH3-128's halves are each uniform: among 64M
// blocks two share a key with probability about 1e-4, and a collision costs
// at most one misrouted request, since the replica verifies every hit).
// Most blocks live on one replica (a conversation sticks to where its
// prefix is), so an entry held by one replica is 16 bytes: the key, and
// the replica's id and tiers inline. An entry held by several points to a
// record of one replica bitmask per tier (3 x ceil(max_replicas / 64)
// words). A probe reads one entry (and the shared tier's table, when it is
// not empty) and yields the tiers' masks of every replica at once, whatever
// the number of replicas; the search prefetches the probes it will need
// (the gallop's all at once, the bisection's a level ahead).
//
// Not thread-safe: the front applies events and routes on one thread (or
// guards the index).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/hash128.h"
#include "gateway/cluster/route/block_table.h"
#include "policies/eviction/eviction_policy.h"

namespace kvgate::route {

using ReplicaId = int32_t;

// How many leading blocks of a chain a replica holds, by the tier it would
// serve each from: the fastest tier that has it, the shared tier last.
struct Residency {
  int32_t device = 0, host = 0, disk = 0, shared = 0;
  int32_t blocks() const { return device + host + disk + shared; }
  bool operator==(const Residency&) const = default;
};

class ReplicaIndex {
 public:
  static constexpr int32_t kMaxReplicas = 1024;

  // Room for replica ids 0 .. max_replicas - 1 (1 to kMaxReplicas; every
  // 64 more cost 8 bytes per tier in each shared entry's record).
  explicit ReplicaIndex(int32_t max_replicas = 64);

  // A new replica, holding nothing: the lowest free id. RouteError when
  // max_replicas are in.
  ReplicaId add_replica();
  // Forgets r and what it holds; its id may be handed out again.
  void remove_replica(ReplicaId r);
  bool has_replica(ReplicaId r) const;
  // Replica ids are below this (the size a lookup's output needs).
  int32_t replica_slots() const { return max_replicas_; }

  // Events. An id that is not in the index is a RouteError.
  void stored(ReplicaId r, const cache::BlockHash& hash, policies::Tier tier);
  void removed(ReplicaId r, const cache::BlockHash& hash, policies::Tier tier);
  void moved(ReplicaId r, const cache::BlockHash& hash, policies::Tier from, policies::Tier to);
  // Walks the whole table: for a restart or a resync, not per request.
  void cleared(ReplicaId r);
  void shared_stored(const cache::BlockHash& hash);
  void shared_removed(const cache::BlockHash& hash);
  void shared_cleared();

  // out[r] for every replica id r (out.size() >= replica_slots()): the
  // leading blocks of `chain` that r holds, counted per tier; replicas not
  // in the index get zeros. The search above: O(log n) probes per run,
  // exact on prefix-shaped holdings, an overcount across holes.
  void lookup(std::span<const cache::BlockHash> chain, std::span<Residency> out) const;
  // The same by definition: every block probed in turn, one probe per
  // block; exact whatever the holdings.
  void lookup_exact(std::span<const cache::BlockHash> chain, std::span<Residency> out) const;

  // Blocks r holds in `tier` (each block once per tier).
  int64_t resident(ReplicaId r, policies::Tier tier) const;
  // Distinct blocks with an entry (held by a replica, not only shared).
  size_t entries() const { return table_.size(); }
  size_t shared_entries() const { return shared_.size(); }
  // Entries held by more than one replica (each with a record).
  size_t multi_entries() const { return records_.size() / record_words_ - free_records_.size(); }
  size_t memory_bytes() const;

 private:
  static constexpr int kTiers = 3;  // device, host, disk: per replica
  static constexpr int kMaxWords = kMaxReplicas / 64;

  uint64_t* record(uint64_t value) { return &records_[static_cast<size_t>(value) * record_words_]; }
  const uint64_t* record(uint64_t value) const { return &records_[static_cast<size_t>(value) * record_words_]; }
  uint64_t new_record();
  void free_record(uint64_t value);
  void check(ReplicaId r) const;
  // Sets or clears r's bit for `tier` in the entry of `key`.
  void set(ReplicaId r, uint64_t key, int tier, bool on);
  // Clears every bit of r in the entry (true: the entry is now empty).
  bool drop(ReplicaId r, uint64_t& value);
  // A record left with one replica becomes an inline entry again.
  void demote(uint64_t& value);
  // lookup_exact's walk, with kWords mask words per tier (0: words_, at run time).
  template <int kWords>
  void walk(std::span<const cache::BlockHash> chain, std::span<Residency> out) const;
  // lookup's search, and one block's tier masks (replica_index.cpp).
  template <int kWords>
  struct BlockState;
  template <int kWords>
  class Search;

  int32_t max_replicas_;
  int words_;         // mask words per tier
  int record_words_;  // kTiers x words_
  BlockTable table_;  // key -> inline entry or record index
  BlockTable shared_; // keys in the shared tier (value unused)
  std::vector<uint64_t> records_;
  std::vector<uint64_t> free_records_;
  std::vector<uint64_t> present_;  // replica ids in the index, as a mask
  struct PerReplica {
    int64_t resident[kTiers] = {};
  };
  std::vector<PerReplica> replicas_;
};

}  // namespace kvgate::route
