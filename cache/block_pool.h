// BlockPool: the device tier of the prefix cache. A fixed set of KV blocks
// (their memory belongs to the Backend; this is only their bookkeeping),
// reference counts, and the prefix index (block hash -> block).
//
// A request's life: lookup() its prompt's chain (the longest verified run of
// cached blocks comes back referenced), allocate() private blocks for the
// rest, commit() each private block once its K/V is complete, release() all
// of them, tail first, when it ends. Released cached blocks stay cached until
// the eviction policy gives them up to an allocate().
//
// Pins: a pinned block holds one reference of its own until its expiry
// (refreshed by every hit), so no policy can take it; expire_pins() drops
// the reference and it is an ordinary cached block again. Pins are counted
// per pinning tenant, for its cache quota.
//
// The policy can be replaced at run time (set_policy): every cached block
// stays cached and the new policy learns them in the old one's order.
//
// Thread ownership: one thread (the engine loop) owns a pool; no locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "cache/block_event.h"
#include "cache/block_hash.h"
#include "cache/cache_stats.h"
#include "cache/hash128.h"
#include "policies/eviction/eviction_policy.h"

namespace kvgate::cache {

// What a cached block records, so that a hit can be verified: a block only
// matches the chain link it was committed under, after the same parent link,
// at the same depth, in the same scope, holding the same tokens. A hash
// collision can then cause a miss, never a wrong hit.
struct BlockKey {
  BlockHash hash;
  BlockHash parent;  // the chain seed for depth 0
  ScopeId scope;
  int32_t depth = 0;
};

// The key of block i of `chain` (seeded by `seed`, in `scope`).
inline BlockKey chain_key(std::span<const BlockHash> chain, const BlockHash& seed, const ScopeId& scope, size_t i) {
  return {chain[i], i == 0 ? seed : chain[i - 1], scope, static_cast<int32_t>(i)};
}

class BlockPool {
 public:
  // `block_bytes` is what one block holds (told to the policy as its size).
  // A null policy means LRU.
  BlockPool(int32_t n_blocks, int32_t block_size, int64_t block_bytes,
            std::unique_ptr<policies::EvictionPolicy> policy = nullptr);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t block_size() const { return block_size_; }
  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  // Blocks an allocate() can still hand out: free ones plus evictable ones.
  int32_t available() const { return static_cast<int32_t>(free_list_.size()) + n_cached_free_; }

  // The longest run of `chain` (chain[i] = hash of tokens[iB, (i+1)B), chained
  // from `seed`) whose every block is cached and verifies against
  // `scope`, the parent link, the depth and the tokens. Each returned block
  // gains a reference.
  std::vector<BlockId> lookup(const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                              std::span<const TokenId> tokens);
  // How many blocks lookup() would return, without referencing them or
  // telling the policy: the scheduler's estimate of a waiting request's
  // cached prefix (it orders admission; nothing is held).
  int32_t match_length(const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                       std::span<const TokenId> tokens) const;

  // A private block (one reference, not cached), charged to `owner`: a free
  // one, else the policy's victim, evicted. Nothing when every block is
  // referenced.
  std::optional<BlockId> allocate(TenantId owner);

  // Enters a private block whose K/V is complete into the index under `key`;
  // `tokens` are its block_size tokens. From now on the block is immutable.
  // Returns false, leaving it private, when `key.hash` is already cached
  // (another request committed the same block first, or a collision).
  bool commit(BlockId b, const BlockKey& key, std::span<const TokenId> tokens);

  // One more reference on a cached block (the tiers' mover holds one while
  // it copies the block down, so that it is not evicted and reused first).
  // Counts as a hit for the policy.
  void retain(BlockId b);

  // Drops one reference from each block, in the order given: callers pass a
  // request's blocks tail first, so that (under LRU) its tail is evicted
  // before its head. A private block's last release frees it; a cached
  // block's makes it evictable.
  void release(std::span<const BlockId> blocks);

  // The engine's count of prompt tokens looked up and served from the cache.
  void record_query(TenantId tenant, int64_t query_tokens, int64_t hit_tokens);

  // --- Pins -------------------------------------------------------------
  using Clock = std::chrono::steady_clock;
  // Pins each of `blocks` (cached ones; a private block cannot be pinned)
  // for `tenant` until now + ttl; a block already pinned keeps the later
  // expiry and the longer ttl. Returns how many blocks were newly pinned.
  int32_t pin(std::span<const BlockId> blocks, TenantId tenant, Clock::duration ttl, Clock::time_point now);
  // Blocks `pin` would newly pin (not pinned yet and cached), for a quota check first.
  int32_t unpinned_among(std::span<const BlockId> blocks) const;
  // A hit on a pinned block pushes its expiry to now + its ttl.
  void refresh_pins(std::span<const BlockId> hits, Clock::time_point now);
  // Unpins what has expired; returns how many.
  int32_t expire_pins(Clock::time_point now);
  int32_t pinned_blocks(TenantId tenant) const;
  int32_t pinned_blocks() const { return static_cast<int32_t>(pins_.size()); }
  // Counts every pin and unpin: observers copy the pin counts when it moves.
  uint64_t pin_changes() const { return pin_changes_; }

  // --- Per tenant -------------------------------------------------------
  // Cached blocks charged to `owner`, referenced or not (its cache quota).
  int64_t cached_blocks(TenantId owner) const;
  // Evicts one of `owner`'s unreferenced cached blocks (the policy's order);
  // false when it has none. Linear in the candidates.
  bool evict_one_of(TenantId owner);
  // The operator's flush: with `pins`, unpins `tenant`'s pins first; then
  // evicts every unreferenced cached block charged to it. Blocks a running
  // request holds stay.
  struct TenantEviction {
    int32_t evicted = 0, unpinned = 0;
  };
  TenantEviction evict_tenant(TenantId tenant, bool pins);

  // Replaces the policy; nothing cached is lost (see the top).
  void set_policy(std::unique_ptr<policies::EvictionPolicy> policy);

  CacheStats stats() const;
  void set_listener(BlockEventListener* listener) { listener_ = listener; }
  const policies::EvictionPolicy& policy() const { return *policy_; }

  // For tests and debugging.
  int32_t ref_count(BlockId b) const { return at(b).refs; }
  bool is_cached(BlockId b) const { return at(b).cached; }
  bool is_pinned(BlockId b) const { return pins_.contains(b); }
  const BlockKey& key(BlockId b) const { return at(b).key; }
  // Checks the invariants at the top of block_pool.cpp; throws
  // std::logic_error naming the first one broken. Linear in the pool size.
  void check_invariants() const;

 private:
  struct Block {
    int32_t refs = 0;
    bool cached = false;
    TenantId owner = 0;  // the tenant its counters are charged to: who allocated it
    BlockKey key;   // valid while cached
  };

  const Block& at(BlockId b) const;
  Block& at(BlockId b) { return const_cast<Block&>(std::as_const(*this).at(b)); }
  std::span<const TokenId> tokens_of(BlockId b) const;
  bool verifies(BlockId b, const BlockKey& want, std::span<const TokenId> tokens) const;
  void reference_cached(BlockId b);
  BlockId evict_victim();
  void drop_cached(BlockId b);  // an unreferenced cached block leaves the cache
  policies::EntryInfo entry_info(BlockId b) const;  // what the policy is told about a cached block
  void unpin(BlockId b);
  void emit(BlockEventKind kind, BlockId b);
  TenantCacheStats& tenant_stats(TenantId t) { return tenants_[t]; }
  void debug_check() const;

  const int32_t block_size_;
  const int64_t block_bytes_;
  std::unique_ptr<policies::EvictionPolicy> policy_;
  std::vector<Block> blocks_;
  std::vector<TokenId> tokens_;    // block_size_ per block, valid while cached
  std::vector<BlockId> free_list_; // a stack: the most recently freed block is reused first
  std::unordered_map<BlockHash, BlockId, Hash128Hasher> index_;
  int32_t n_in_use_ = 0, n_cached_free_ = 0;
  std::unordered_map<TenantId, TenantCacheStats> tenants_;
  struct Pin {
    TenantId tenant = 0;
    Clock::duration ttl{};
    Clock::time_point until;
  };
  std::map<BlockId, Pin> pins_;             // ordered: expiry scans and flushes are deterministic
  Clock::time_point next_expiry_ = Clock::time_point::max();  // the earliest `until`, or max: nothing to scan
  std::unordered_map<TenantId, int32_t> pinned_by_;  // pins per pinning tenant
  uint64_t pin_changes_ = 0;
  BlockEventListener* listener_ = nullptr;
};

}  // namespace kvgate::cache
