// The TierChain of tier_chain.h, as replay.h describes it: a BlockPool for
// the device, a LowerTier per further tier, and the placeholders.
//
// Between requests: no request holds a block; the cached blocks (all
// candidates) are at most the capacity; every other pool block is free or a
// placeholder. A request takes free blocks only (placeholders are released
// into free blocks first, as many as it needs), so the device evicts nothing
// while it is served; afterwards placeholders are allocated back until the
// cached blocks are within the capacity, each allocation past the free list
// evicting the policy's victim.
#include "gateway/tools/sim/tier_chain.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "cache/block_pool.h"
#include "policies/eviction/belady_policy.h"

namespace kvgate::sim {
namespace {


using policies::EntryId;
using policies::EvictionPolicy;
using policies::Tier;

constexpr uint64_t kTag = 0x6b76676174652d73ull;  // "kvgate-s": every replay link's high half
const cache::ScopeId kScope{1, kTag};
const cache::BlockHash kSeed{~0ull, kTag};  // no link's low half (a 31-bit id + 1) is all ones
constexpr TenantId kTenant = 1;

// A block's chain link. Its low half is what the pool tells the policy as
// the block's content key (EntryInfo::key), so it is never 0 ("no key"); the
// lower tiers use the same key.
uint64_t key_of(int64_t id) { return static_cast<uint64_t>(id) + 1; }
int64_t id_of(const cache::BlockHash& link) { return static_cast<int64_t>(link.lo) - 1; }
cache::BlockHash link_of(int64_t id) { return {key_of(id), kTag}; }

// A policy for one tier, and the Belady view of it when it is the bound.
struct TierPolicy {
  std::unique_ptr<EvictionPolicy> policy;
  policies::BeladyPolicy* belady = nullptr;
};

TierPolicy make_tier_policy(const policies::PolicySpec& spec) {
  if (spec.name == "belady") {
    auto b = policies::make_belady_policy();
    policies::BeladyPolicy* raw = b.get();
    return {std::move(b), raw};
  }
  return {policies::make_eviction_policy(spec), nullptr};
}

// A host or disk tier: blocks by id, ordered by its own policy. Blocks enter
// when the tier above evicts them (or refresh if already here), leave to the
// tier below when this one is over capacity.
class LowerTier {
 public:
  LowerTier(Tier tier, int64_t capacity, TierPolicy policy, LowerTier* below, IndexFeed feed)
      : tier_(tier), capacity_(capacity), p_(std::move(policy)), below_(below), feed_(feed) {}

  Tier tier() const { return tier_; }

  bool contains(int64_t id) const { return slot_of_.contains(id); }

  // A lookup reused it (it is copied up; this copy stays).
  void hit(int64_t id, int64_t next_use) {
    const EntryId s = slot_of_.at(id);
    p_.policy->on_hit(s);
    set_next_use(s, next_use);
    p_.policy->on_release(s);
  }

  void insert(int64_t id, int32_t depth, int64_t next_use) {
    if (auto it = slot_of_.find(id); it != slot_of_.end()) {
      hit(id, next_use);
      return;
    }
    EntryId s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = static_cast<EntryId>(slots_.size());
      slots_.emplace_back();
    }
    slots_[static_cast<size_t>(s)] = {id, depth, next_use};
    slot_of_.emplace(id, s);
    p_.policy->on_insert(s, {depth, kTenant, 0, tier_, key_of(id)});
    set_next_use(s, next_use);
    p_.policy->on_release(s);
    while (static_cast<int64_t>(slot_of_.size()) > capacity_) evict();
  }

 private:
  struct Slot {
    int64_t id = 0;
    int32_t depth = 0;
    int64_t next_use = 0;
  };
  void set_next_use(EntryId s, int64_t next_use) {
    slots_[static_cast<size_t>(s)].next_use = next_use;
    if (p_.belady) p_.belady->set_next_use(s, next_use);
  }
  void evict() {
    const std::optional<EntryId> v = p_.policy->victim();
    if (!v || !slot_of_.contains(slots_[static_cast<size_t>(*v)].id))
      throw std::logic_error(std::string(tier_name(tier_)) + " tier: the policy named no victim");
    const Slot gone = slots_[static_cast<size_t>(*v)];
    p_.policy->on_remove(*v);
    slot_of_.erase(gone.id);
    free_.push_back(*v);
    if (feed_.index && below_) feed_.index->moved(feed_.replica, link_of(gone.id), tier_, below_->tier());
    else if (feed_.index) feed_.index->removed(feed_.replica, link_of(gone.id), tier_);
    if (below_) below_->insert(gone.id, gone.depth, gone.next_use);
  }

  const Tier tier_;
  const int64_t capacity_;
  TierPolicy p_;
  LowerTier* below_;
  const IndexFeed feed_;
  std::unordered_map<int64_t, EntryId> slot_of_;
  std::vector<Slot> slots_;
  std::vector<EntryId> free_;
};

// The policy of the tiers below the device: the bound is the bound on every tier.
const policies::PolicySpec& lower_spec(const ReplayConfig& c) {
  return c.lower_policy && c.policy.name != "belady" ? *c.lower_policy : c.policy;
}

// For each block reference of the trace, the request (within its copy) that
// next holds the same id, or -1; only Belady needs it.
std::vector<int32_t> next_uses(const ReplayTrace& trace) {
  std::vector<int32_t> next(static_cast<size_t>(trace.block_refs()), -1);
  std::vector<int32_t> seen_at(static_cast<size_t>(trace.id_limit()), -1);
  for (int64_t r = trace.requests() - 1; r >= 0; --r) {
    const auto chain = trace.chain(r);
    const int64_t first = trace.first_ref(r);
    for (size_t i = 0; i < chain.size(); ++i) {
      int32_t& s = seen_at[static_cast<size_t>(chain[i])];
      next[static_cast<size_t>(first) + i] = s;
      s = static_cast<int32_t>(r);
    }
  }
  return next;
}

}  // namespace

class TierChain::Impl final : public cache::BlockEventListener {
 public:
  Impl(const ReplayTrace& trace, const ReplayConfig& config, IndexFeed feed)
      : trace_(trace), config_(config), capacity_(config.tiers.front().blocks), feed_(feed) {
    const auto pool_blocks = static_cast<size_t>(capacity_) + static_cast<size_t>(trace.max_chain());
    next_of_block_.assign(pool_blocks, policies::BeladyPolicy::kNever);
    TierPolicy device = make_tier_policy(config.policy);
    belady_ = device.belady;
    params_ = device.policy->params();
    pool_ = std::make_unique<cache::BlockPool>(static_cast<int32_t>(pool_blocks), 1, 0, std::move(device.policy));
    pool_->set_listener(this);
    // Built bottom up, so that each tier knows the one below.
    for (size_t t = config.tiers.size(); t-- > 1;)
      lower_.insert(lower_.begin(), std::make_unique<LowerTier>(config.tiers[t].tier, config.tiers[t].blocks,
                                                                make_tier_policy(lower_spec(config)),
                                                                lower_.empty() ? nullptr : lower_.front().get(), feed));
    if (belady_) next_ = next_uses(trace);
    result_.tiers.resize(config.tiers.size());
    result_.policy = policies::to_string(config.policy);
    if (config.tiers.size() > 1 && lower_spec(config) != config.policy)
      result_.policy += " / " + policies::to_string(lower_spec(config));
    result_.params = params_;
  }

  const ReplayResult& result() const { return result_; }

  void on_block_event(const cache::BlockEvent& e) override {
    if (e.kind == cache::BlockEventKind::kStored) {
      if (feed_.index) feed_.index->stored(feed_.replica, e.hash, Tier::kDevice);
      return;
    }
    ++result_.evictions;
    if (feed_.index && !lower_.empty()) feed_.index->moved(feed_.replica, e.hash, Tier::kDevice, lower_.front()->tier());
    else if (feed_.index) feed_.index->removed(feed_.replica, e.hash, Tier::kDevice);
    if (!lower_.empty())
      lower_.front()->insert(id_of(e.hash), e.depth, next_of_block_[static_cast<size_t>(e.block)]);
  }

  int64_t next_use(int32_t copy, int64_t r, size_t i) const {
    if (next_.empty()) return 0;  // only Belady looks ahead
    const int32_t n = next_[static_cast<size_t>(trace_.first_ref(r)) + i];
    return n < 0 ? policies::BeladyPolicy::kNever : static_cast<int64_t>(copy) * trace_.requests() + n;
  }

  void serve(int32_t copy, int64_t r) {
    const auto chain = trace_.chain(r);
    const size_t n = chain.size();
    const int64_t offset = static_cast<int64_t>(copy) * trace_.id_limit();
    links_.resize(n);
    tokens_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      links_[i] = link_of(offset + chain[i]);
      tokens_[i] = static_cast<TokenId>(offset + chain[i]);
    }

    // 1. The device's longest cached prefix.
    std::vector<BlockId> held = pool_->lookup(kScope, kSeed, links_, tokens_);
    const size_t device_hits = held.size();
    for (size_t i = 0; i < device_hits; ++i) note_next_use(held[i], copy, r, i);
    make_room(n - device_hits);

    // 2. The prefix goes on through the lower tiers, copied up.
    size_t pos = device_hits;
    tier_of_.assign(n, 0);
    std::vector<size_t>& tier_of = tier_of_;
    while (pos < n) {
      const int64_t id = offset + chain[pos];
      size_t t = 0;
      while (t < lower_.size() && !lower_[t]->contains(id)) ++t;
      if (t == lower_.size()) break;
      lower_[t]->hit(id, next_use(copy, r, pos));
      tier_of[pos] = t + 1;
      held.push_back(bring_in(copy, r, pos));
      ++pos;
    }
    // 3. The rest is computed and committed.
    for (size_t i = pos; i < n; ++i) held.push_back(bring_in(copy, r, i));

    // Counts: the prefix [0, pos) hit, each block in the tier it came from.
    for (size_t i = 0; i < n; ++i) {
      const auto tokens = trace_.block_tokens(r, i);
      const double prefill = static_cast<double>(tokens) * (1.0 + config_.depth_weight * static_cast<double>(i));
      result_.tokens += tokens;
      result_.prefill += prefill;
      if (i >= pos) continue;
      result_.hit_tokens += tokens;
      result_.hit_prefill += prefill;
      ++result_.hit_blocks;
      TierHits& th = result_.tiers[i < device_hits ? 0 : tier_of[i]];
      th.tokens += tokens;
      ++th.blocks;
    }
    result_.blocks += static_cast<int64_t>(n);
    ++result_.requests;

    // 4. Released tail first, as the engine does.
    std::reverse(held.begin(), held.end());
    pool_->release(held);
    // 5. Back within the capacity.
    while (pool_->policy().candidates() > capacity_) {
      const std::optional<BlockId> b = pool_->allocate(kTenant);
      if (!b) throw std::logic_error("sim: the device pool has nothing to evict");
      placeholders_.push_back(*b);
    }
  }

 private:
  // Makes sure `blocks` free blocks exist, from the placeholders.
  void make_room(size_t blocks) {
    const auto free_blocks = [&] { return static_cast<size_t>(pool_->available() - pool_->policy().candidates()); };
    while (free_blocks() < blocks && !placeholders_.empty()) {
      const BlockId one[] = {placeholders_.back()};
      placeholders_.pop_back();
      pool_->release(one);
    }
  }

  // A device block for block i of request r, committed with its content (a
  // block already cached past the first miss stays private: the pool's rule).
  BlockId bring_in(int32_t copy, int64_t r, size_t i) {
    const std::optional<BlockId> b = pool_->allocate(kTenant);
    if (!b) throw std::logic_error("sim: no free device block for a request");
    const cache::BlockKey key = cache::chain_key(links_, kSeed, kScope, i);
    if (pool_->commit(*b, key, std::span(tokens_).subspan(i, 1))) note_next_use(*b, copy, r, i);
    return *b;
  }

  void note_next_use(BlockId b, int32_t copy, int64_t r, size_t i) {
    if (!belady_) return;
    const int64_t when = next_use(copy, r, i);
    next_of_block_[static_cast<size_t>(b)] = when;
    belady_->set_next_use(b, when);
  }

  const ReplayTrace& trace_;
  const ReplayConfig& config_;
  const int64_t capacity_;
  const IndexFeed feed_;
  std::vector<int64_t> next_of_block_;     // per device block: its next use (Belady)
  policies::BeladyPolicy* belady_ = nullptr;  // the device policy, when it is the bound
  policies::PolicyParams params_;
  std::unique_ptr<cache::BlockPool> pool_;
  std::vector<std::unique_ptr<LowerTier>> lower_;  // host, then disk
  std::vector<BlockId> placeholders_;
  std::vector<int32_t> next_;              // per block reference (Belady)
  std::vector<cache::BlockHash> links_;
  std::vector<TokenId> tokens_;
  std::vector<size_t> tier_of_;            // per block of the request being served: 0 device, t + 1 lower tier t
  ReplayResult result_;
};


cache::BlockHash trace_link(int64_t id) { return link_of(id); }

TierChain::TierChain(const ReplayTrace& trace, const ReplayConfig& config, IndexFeed feed)
    : impl_(std::make_unique<Impl>(trace, config, feed)) {}
TierChain::~TierChain() = default;
void TierChain::serve(int32_t copy, int64_t r) { impl_->serve(copy, r); }
const ReplayResult& TierChain::result() const { return impl_->result(); }

}  // namespace kvgate::sim
