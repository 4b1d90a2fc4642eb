// The block pool's bookkeeping.
//
// Invariants (check_invariants() verifies them; with KVGATE_CHECK_INVARIANTS,
// as in the sanitizer build, after every mutating call). Every block is in exactly one of four states:
//
//   free         refs == 0, !cached. On free_list_ (exactly once). Holds
//                nothing anyone will read: allocate() hands these out first.
//   private      refs >= 1, !cached. Owned by the request writing it; not in
//                the index, so nobody else can find it. (Only cached blocks
//                are ever shared, so in practice refs == 1.)
//   cached, in use
//                refs >= 1, cached. index_[key.hash] == this block; the
//                policy knows it but it is not a candidate. Immutable: its
//                K/V was complete when it was committed, and the engine only
//                writes to private blocks.
//   cached, free refs == 0, cached. In index_ as above, and a policy
//                candidate: the only state eviction may take a block from.
//
// So: free_list_ holds exactly the free blocks; index_ maps exactly the cached
// blocks' hashes to them; the policy's candidates are exactly the cached-free
// blocks; n_in_use_ counts refs >= 1, n_cached_free_ the cached-free blocks,
// and free + in use + cached-free = all blocks. A referenced block is never
// evicted: evict_victim() refuses a victim that is not cached-free, whatever
// the policy says. Per-tenant counters sum to the pool's; a block is charged
// to the tenant that allocated it (its owner), whichever tenants share it.
// A pinned block is cached and holds exactly one reference for its pin; the
// per-tenant pin counts sum to the pins.
//
// Thread ownership: the engine thread that owns the pool; no locks.
#include "cache/block_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "policies/eviction/lru_policy.h"

namespace kvgate::cache {
namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("block pool invariant: " + what); }

}  // namespace

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size, int64_t block_bytes,
                     std::unique_ptr<policies::EvictionPolicy> policy)
    : block_size_(block_size),
      block_bytes_(block_bytes),
      policy_(policy ? std::move(policy) : policies::make_lru_policy()),
      blocks_(static_cast<size_t>(std::max(n_blocks, 0))),
      tokens_(static_cast<size_t>(std::max(n_blocks, 0)) * static_cast<size_t>(std::max(block_size, 0))) {
  if (n_blocks <= 0 || block_size <= 0) throw std::invalid_argument("BlockPool: needs at least one block of at least one token");
  free_list_.reserve(blocks_.size());
  for (BlockId b = n_blocks - 1; b >= 0; --b) free_list_.push_back(b);  // block 0 is handed out first
  index_.reserve(blocks_.size());
}

BlockPool::~BlockPool() = default;

const BlockPool::Block& BlockPool::at(BlockId b) const {
  if (b < 0 || static_cast<size_t>(b) >= blocks_.size()) throw std::out_of_range("block id " + std::to_string(b) + " is outside the pool");
  return blocks_[static_cast<size_t>(b)];
}

std::span<const TokenId> BlockPool::tokens_of(BlockId b) const {
  return std::span(tokens_).subspan(static_cast<size_t>(b) * block_size_, static_cast<size_t>(block_size_));
}

bool BlockPool::verifies(BlockId b, const BlockKey& want, std::span<const TokenId> tokens) const {
  const BlockKey& k = blocks_[b].key;
  return k.hash == want.hash && k.parent == want.parent && k.depth == want.depth && k.scope == want.scope &&
         std::ranges::equal(tokens_of(b), tokens);
}

int32_t BlockPool::match_length(const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                                std::span<const TokenId> tokens) const {
  const size_t B = static_cast<size_t>(block_size_);
  size_t i = 0;
  for (; i < chain.size() && (i + 1) * B <= tokens.size(); ++i) {
    auto it = index_.find(chain[i]);
    if (it == index_.end()) break;
    const BlockKey want = chain_key(chain, seed, scope, i);
    if (!verifies(it->second, want, tokens.subspan(i * B, B))) break;
  }
  return static_cast<int32_t>(i);
}

std::vector<BlockId> BlockPool::lookup(const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                                       std::span<const TokenId> tokens) {
  std::vector<BlockId> hits;
  const int32_t n = match_length(scope, seed, chain, tokens);
  for (int32_t i = 0; i < n; ++i) hits.push_back(index_.at(chain[static_cast<size_t>(i)]));
  for (BlockId b : hits) reference_cached(b);
  debug_check();
  return hits;
}

void BlockPool::retain(BlockId b) {
  if (!at(b).cached) throw std::logic_error("block pool: retain of block " + std::to_string(b) + ", which is not cached");
  reference_cached(b);
  debug_check();
}

void BlockPool::reference_cached(BlockId b) {
  Block& blk = blocks_[b];
  TenantCacheStats& s = tenant_stats(blk.owner);
  if (blk.refs++ == 0) {
    --n_cached_free_;
    ++n_in_use_;
    --s.blocks_cached_free;
    ++s.blocks_in_use;
  }
  policy_->on_hit(b);
}

std::optional<BlockId> BlockPool::allocate(TenantId owner) {
  BlockId b;
  if (!free_list_.empty()) {
    b = free_list_.back();
    free_list_.pop_back();
  } else if (n_cached_free_ > 0) {
    b = evict_victim();
  } else {
    return std::nullopt;
  }
  Block& blk = blocks_[b];
  blk.refs = 1;
  blk.owner = owner;
  ++n_in_use_;
  ++tenant_stats(owner).blocks_in_use;
  debug_check();
  return b;
}

BlockId BlockPool::evict_victim() {
  const std::optional<policies::EntryId> v = policy_->victim();
  if (!v || *v < 0 || static_cast<size_t>(*v) >= blocks_.size() || !blocks_[*v].cached || blocks_[*v].refs != 0)
    throw std::logic_error(std::string("eviction policy '") + std::string(policy_->name()) +
                           "' named a victim that is not an unreferenced cached block");
  drop_cached(*v);
  return *v;
}

policies::EntryInfo BlockPool::entry_info(BlockId b) const {
  const Block& blk = blocks_[b];
  // The key is the chain hash's low half, which block events already carry:
  // non-secret, and the same whichever block holds that content.
  return {blk.key.depth, blk.owner, block_bytes_, policies::Tier::kDevice, blk.key.hash.lo};
}

void BlockPool::drop_cached(BlockId b) {
  Block& blk = blocks_[b];
  emit(BlockEventKind::kRemoved, b);
  index_.erase(blk.key.hash);
  policy_->on_remove(b);
  blk.cached = false;
  --n_cached_free_;
  TenantCacheStats& s = tenant_stats(blk.owner);
  --s.blocks_cached_free;
  --s.blocks_cached;
  ++s.evictions;
}

int32_t BlockPool::unpinned_among(std::span<const BlockId> blocks) const {
  int32_t n = 0;
  for (BlockId b : blocks) n += at(b).cached && !pins_.contains(b);
  return n;
}

int32_t BlockPool::pin(std::span<const BlockId> blocks, TenantId tenant, Clock::duration ttl, Clock::time_point now) {
  int32_t added = 0;
  for (BlockId b : blocks) {
    if (!at(b).cached) continue;
    auto [it, fresh] = pins_.try_emplace(b, Pin{tenant, ttl, now + ttl});
    if (fresh) {
      reference_cached(b);  // the pin's own reference
      ++pinned_by_[tenant];
      ++tenant_stats(tenant).blocks_pinned;
      ++pin_changes_;
      ++added;
    } else {
      it->second.ttl = std::max(it->second.ttl, ttl);
      it->second.until = std::max(it->second.until, now + ttl);
    }
    next_expiry_ = std::min(next_expiry_, it->second.until);
  }
  debug_check();
  return added;
}

void BlockPool::refresh_pins(std::span<const BlockId> hits, Clock::time_point now) {
  if (pins_.empty()) return;
  for (BlockId b : hits)
    if (auto it = pins_.find(b); it != pins_.end()) it->second.until = std::max(it->second.until, now + it->second.ttl);
}

void BlockPool::unpin(BlockId b) {
  auto it = pins_.find(b);
  const TenantId tenant = it->second.tenant;
  pins_.erase(it);
  if (--pinned_by_[tenant] == 0) pinned_by_.erase(tenant);
  --tenant_stats(tenant).blocks_pinned;
  ++pin_changes_;
  const BlockId one[] = {b};
  release(one);
}

int32_t BlockPool::expire_pins(Clock::time_point now) {
  if (now < next_expiry_) return 0;
  std::vector<BlockId> due;
  next_expiry_ = Clock::time_point::max();
  for (const auto& [b, p] : pins_) {
    if (p.until <= now) due.push_back(b);
    else next_expiry_ = std::min(next_expiry_, p.until);
  }
  for (BlockId b : due) unpin(b);
  return static_cast<int32_t>(due.size());
}

int32_t BlockPool::pinned_blocks(TenantId tenant) const {
  const auto it = pinned_by_.find(tenant);
  return it == pinned_by_.end() ? 0 : it->second;
}

int64_t BlockPool::cached_blocks(TenantId owner) const {
  const auto it = tenants_.find(owner);
  return it == tenants_.end() ? 0 : it->second.blocks_cached;
}

bool BlockPool::evict_one_of(TenantId owner) {
  for (policies::EntryId e : policy_->eviction_order()) {
    const Block& blk = blocks_[e];
    if (blk.owner != owner || !blk.cached || blk.refs != 0) continue;
    drop_cached(e);
    free_list_.push_back(e);
    debug_check();
    return true;
  }
  return false;
}

BlockPool::TenantEviction BlockPool::evict_tenant(TenantId tenant, bool pins) {
  TenantEviction out;
  if (pins) {
    std::vector<BlockId> mine;
    for (const auto& [b, p] : pins_)
      if (p.tenant == tenant) mine.push_back(b);
    for (BlockId b : mine) unpin(b);
    out.unpinned = static_cast<int32_t>(mine.size());
  }
  for (BlockId b = 0; b < num_blocks(); ++b) {
    const Block& blk = blocks_[b];
    if (blk.owner != tenant || !blk.cached || blk.refs != 0) continue;
    drop_cached(b);
    free_list_.push_back(b);
    ++out.evicted;
  }
  debug_check();
  return out;
}

void BlockPool::set_policy(std::unique_ptr<policies::EvictionPolicy> next) {
  if (!next) throw std::invalid_argument("BlockPool::set_policy: null policy");
  // Referenced cached blocks first (not candidates), then the candidates in
  // the order the old policy would have evicted them: each is inserted and
  // released, the next victim first, so an order-keeping policy (LRU) ends
  // up with the same order.
  for (const auto& [hash, b] : index_) {
    const Block& blk = blocks_[b];
    if (blk.refs > 0) next->on_insert(b, entry_info(b));
  }
  for (policies::EntryId e : policy_->eviction_order()) {
    next->on_insert(e, entry_info(e));
    next->on_release(e);
  }
  policy_ = std::move(next);
  debug_check();
}

bool BlockPool::commit(BlockId b, const BlockKey& key, std::span<const TokenId> tokens) {
  Block& blk = at(b);
  if (blk.refs == 0 || blk.cached) throw std::logic_error("commit: block " + std::to_string(b) + " is not private");
  if (tokens.size() != static_cast<size_t>(block_size_)) throw std::invalid_argument("commit: a block holds block_size tokens");
  if (index_.contains(key.hash)) return false;
  index_.emplace(key.hash, b);
  blk.cached = true;
  blk.key = key;
  std::ranges::copy(tokens, tokens_.begin() + static_cast<ptrdiff_t>(b) * block_size_);
  ++tenant_stats(blk.owner).blocks_stored;
  ++tenant_stats(blk.owner).blocks_cached;
  policy_->on_insert(b, entry_info(b));
  emit(BlockEventKind::kStored, b);
  debug_check();
  return true;
}

void BlockPool::release(std::span<const BlockId> blocks) {
  for (BlockId b : blocks) {
    Block& blk = at(b);
    if (blk.refs <= 0) throw std::logic_error("release: block " + std::to_string(b) + " is not referenced");
    if (--blk.refs > 0) continue;
    --n_in_use_;
    TenantCacheStats& s = tenant_stats(blk.owner);
    --s.blocks_in_use;
    if (blk.cached) {
      ++n_cached_free_;
      ++s.blocks_cached_free;
      policy_->on_release(b);
    } else {
      free_list_.push_back(b);
    }
  }
  debug_check();
}

void BlockPool::record_query(TenantId tenant, int64_t query_tokens, int64_t hit_tokens) {
  TenantCacheStats& s = tenant_stats(tenant);
  s.query_tokens += query_tokens;
  s.hit_tokens += hit_tokens;
}

CacheStats BlockPool::stats() const {
  CacheStats st;
  st.blocks_total = num_blocks();
  st.blocks_in_use = n_in_use_;
  st.blocks_cached_free = n_cached_free_;
  st.blocks_free = static_cast<int32_t>(free_list_.size());
  st.blocks_pinned = pinned_blocks();
  st.tenants.assign(tenants_.begin(), tenants_.end());
  std::ranges::sort(st.tenants, {}, &std::pair<TenantId, TenantCacheStats>::first);
  for (const auto& [id, s] : st.tenants) {
    st.all.query_tokens += s.query_tokens;
    st.all.hit_tokens += s.hit_tokens;
    st.all.blocks_in_use += s.blocks_in_use;
    st.all.blocks_cached_free += s.blocks_cached_free;
    st.all.blocks_stored += s.blocks_stored;
    st.all.evictions += s.evictions;
    st.all.blocks_pinned += s.blocks_pinned;
    st.all.blocks_cached += s.blocks_cached;
  }
  return st;
}

void BlockPool::emit(BlockEventKind kind, BlockId b) {
  if (!listener_) return;
  const Block& blk = blocks_[b];
  // Depth 0's parent is the chain seed, derived from the secret scope: it
  // never leaves the pool (invariant 7). Deeper parents are public links.
  const BlockHash parent = blk.key.depth == 0 ? BlockHash{} : blk.key.parent;
  listener_->on_block_event({kind, b, blk.key.hash, parent, blk.owner, blk.key.depth});
}

void BlockPool::debug_check() const {
#ifdef KVGATE_CHECK_INVARIANTS
  check_invariants();
#endif
}

void BlockPool::check_invariants() const {
  const auto n = static_cast<BlockId>(blocks_.size());
  std::vector<uint8_t> on_free_list(blocks_.size(), 0);
  for (BlockId b : free_list_) {
    if (b < 0 || b >= n) broken("free list holds block " + std::to_string(b) + ", outside the pool");
    if (on_free_list[b]++) broken("block " + std::to_string(b) + " is on the free list twice");
  }
  int32_t in_use = 0, cached_free = 0, cached = 0;
  std::unordered_map<TenantId, std::pair<int64_t, int64_t>> per_tenant;  // in use, cached free
  std::unordered_map<TenantId, int64_t> cached_per;
  for (BlockId b = 0; b < n; ++b) {
    const Block& blk = blocks_[b];
    const std::string who = "block " + std::to_string(b) + ": ";
    if (blk.refs < 0) broken(who + "negative reference count");
    const bool free = blk.refs == 0 && !blk.cached;
    if (free != static_cast<bool>(on_free_list[b])) broken(who + (free ? "free but not on the free list" : "on the free list but not free"));
    if (blk.refs > 0) ++in_use, ++per_tenant[blk.owner].first;
    if (blk.cached) {
      ++cached;
      ++cached_per[blk.owner];
      auto it = index_.find(blk.key.hash);
      if (it == index_.end() || it->second != b) broken(who + "cached but not indexed under its hash");
      if (blk.refs == 0) ++cached_free, ++per_tenant[blk.owner].second;
    }
  }
  if (static_cast<size_t>(cached) != index_.size()) broken("the index holds blocks that are not cached");
  if (in_use != n_in_use_) broken("in-use count " + std::to_string(n_in_use_) + " != " + std::to_string(in_use));
  if (cached_free != n_cached_free_) broken("cached-free count " + std::to_string(n_cached_free_) + " != " + std::to_string(cached_free));
  if (policy_->candidates() != cached_free)
    broken("the policy has " + std::to_string(policy_->candidates()) + " candidates, the pool " + std::to_string(cached_free) +
           " evictable blocks");
  if (static_cast<int64_t>(free_list_.size()) + in_use + cached_free != n) broken("states do not add up to the pool size");
  for (const auto& [tenant, s] : tenants_) {
    auto it = per_tenant.find(tenant);
    const auto want = it == per_tenant.end() ? std::pair<int64_t, int64_t>{0, 0} : it->second;
    if (s.blocks_in_use != want.first || s.blocks_cached_free != want.second) broken("per-tenant block counts drifted");
  }
  for (const auto& [tenant, counts] : per_tenant)
    if (!tenants_.contains(tenant)) broken("a tenant holds blocks but has no counters");
  for (const auto& [tenant, s] : tenants_)
    if (s.blocks_cached != (cached_per.contains(tenant) ? cached_per.at(tenant) : 0)) broken("per-tenant cached counts drifted");
  std::unordered_map<TenantId, int32_t> pins_per;
  for (const auto& [b, p] : pins_) {
    if (b < 0 || b >= n || !blocks_[b].cached || blocks_[b].refs < 1)
      broken("block " + std::to_string(b) + " is pinned but not a referenced cached block");
    ++pins_per[p.tenant];
  }
  if (pins_per != pinned_by_) broken("per-tenant pin counts drifted");
  for (const auto& [tenant, s] : tenants_)
    if (s.blocks_pinned != (pins_per.contains(tenant) ? pins_per.at(tenant) : 0)) broken("per-tenant pinned counters drifted");
}

}  // namespace kvgate::cache
