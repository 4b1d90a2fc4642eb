#include "gateway/cluster/route/replica_index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "gateway/cluster/route/route_error.h"

namespace kvgate::route {
namespace {

// An entry's value: an inline holder (bit 63 set, the replica id in bits
// 8..23, its tiers as bits 0..2), or the index of a record.
constexpr uint64_t kInline = uint64_t{1} << 63;
bool is_inline(uint64_t v) { return (v & kInline) != 0; }
uint64_t make_inline(ReplicaId r, unsigned tiers) { return kInline | (static_cast<uint64_t>(r) << 8) | tiers; }
ReplicaId holder(uint64_t v) { return static_cast<ReplicaId>((v >> 8) & 0xffff); }
unsigned tiers_of(uint64_t v) { return static_cast<unsigned>(v & 7); }

// Key 0 marks an empty slot: a hash whose low half is 0 is keyed by its
// high half instead (never 0 either).
uint64_t key_of(const cache::BlockHash& h) { return h.lo != 0 ? h.lo : h.hi | 1; }

int tier_index(policies::Tier t) { return static_cast<int>(t); }

}  // namespace

ReplicaIndex::ReplicaIndex(int32_t max_replicas) : max_replicas_(max_replicas) {
  if (max_replicas < 1 || max_replicas > kMaxReplicas)
    throw RouteError("a replica index holds 1 to " + std::to_string(kMaxReplicas) + " replicas, not " +
                     std::to_string(max_replicas));
  words_ = (max_replicas + 63) / 64;
  record_words_ = kTiers * words_;
  present_.assign(static_cast<size_t>(words_), 0);
  replicas_.resize(static_cast<size_t>(max_replicas));
}

ReplicaId ReplicaIndex::add_replica() {
  for (ReplicaId r = 0; r < max_replicas_; ++r)
    if (!has_replica(r)) {
      present_[static_cast<size_t>(r / 64)] |= uint64_t{1} << (r % 64);
      replicas_[static_cast<size_t>(r)] = {};
      return r;
    }
  throw RouteError("the replica index is full (" + std::to_string(max_replicas_) + " replicas)");
}

void ReplicaIndex::remove_replica(ReplicaId r) {
  cleared(r);
  present_[static_cast<size_t>(r / 64)] &= ~(uint64_t{1} << (r % 64));
}

bool ReplicaIndex::has_replica(ReplicaId r) const {
  return r >= 0 && r < max_replicas_ && (present_[static_cast<size_t>(r / 64)] >> (r % 64) & 1);
}

void ReplicaIndex::check(ReplicaId r) const {
  if (!has_replica(r)) throw RouteError("replica " + std::to_string(r) + " is not in the index");
}

uint64_t ReplicaIndex::new_record() {
  if (!free_records_.empty()) {
    const uint64_t v = free_records_.back();
    free_records_.pop_back();
    std::fill_n(record(v), record_words_, 0);
    return v;
  }
  const uint64_t v = records_.size() / static_cast<size_t>(record_words_);
  records_.resize(records_.size() + static_cast<size_t>(record_words_), 0);
  return v;
}

void ReplicaIndex::free_record(uint64_t value) { free_records_.push_back(value); }

void ReplicaIndex::set(ReplicaId r, uint64_t key, int tier, bool on) {
  PerReplica& pr = replicas_[static_cast<size_t>(r)];
  const uint64_t bit = uint64_t{1} << (r % 64);
  const size_t word = static_cast<size_t>(r / 64);
  if (!on) {
    uint64_t* v = table_.find(key);
    if (!v) return;
    if (is_inline(*v)) {
      if (holder(*v) != r || !(tiers_of(*v) >> tier & 1)) return;
      --pr.resident[tier];
      *v &= ~uint64_t{1} << tier;
      if (tiers_of(*v) == 0) table_.erase(key);
      return;
    }
    uint64_t& m = record(*v)[static_cast<size_t>(tier * words_) + word];
    if (!(m & bit)) return;
    --pr.resident[tier];
    m &= ~bit;
    demote(*v);  // never empty: a record's other holders stay
    return;
  }
  bool fresh = false;
  uint64_t& v = table_.insert(key, fresh);
  if (fresh) {
    v = make_inline(r, 1u << tier);
    ++pr.resident[tier];
    return;
  }
  if (is_inline(v)) {
    if (holder(v) == r) {
      if (!(tiers_of(v) >> tier & 1)) ++pr.resident[tier], v |= uint64_t{1} << tier;
      return;
    }
    // A second holder: the entry gets a record.
    const ReplicaId first = holder(v);
    const unsigned first_tiers = tiers_of(v);
    const uint64_t rec = new_record();  // records_ is apart from the table: `v` stays valid
    uint64_t* masks = record(rec);
    for (int t = 0; t < kTiers; ++t)
      if (first_tiers >> t & 1) masks[t * words_ + first / 64] |= uint64_t{1} << (first % 64);
    v = rec;
  }
  uint64_t& m = record(v)[static_cast<size_t>(tier * words_) + word];
  if (!(m & bit)) ++pr.resident[tier], m |= bit;
}

void ReplicaIndex::demote(uint64_t& value) {
  // Who is left: the union of the tiers' masks. A record has two holders
  // or more until this runs, so one is left at least.
  const uint64_t* masks = record(value);
  int holders = 0;
  ReplicaId who = 0;
  for (int w = 0; w < words_; ++w) {
    uint64_t any = 0;
    for (int t = 0; t < kTiers; ++t) any |= masks[t * words_ + w];
    holders += std::popcount(any);
    if (any) who = w * 64 + std::countr_zero(any);
  }
  if (holders > 1) return;
  unsigned tiers = 0;
  for (int t = 0; t < kTiers; ++t)
    if (masks[t * words_ + who / 64] >> (who % 64) & 1) tiers |= 1u << t;
  free_record(value);
  value = make_inline(who, tiers);
}

bool ReplicaIndex::drop(ReplicaId r, uint64_t& value) {
  PerReplica& pr = replicas_[static_cast<size_t>(r)];
  if (is_inline(value)) {
    if (holder(value) != r) return false;
    for (int t = 0; t < kTiers; ++t) pr.resident[t] -= tiers_of(value) >> t & 1;
    return true;
  }
  uint64_t* masks = record(value);
  const uint64_t bit = uint64_t{1} << (r % 64);
  for (int t = 0; t < kTiers; ++t) {
    uint64_t& m = masks[t * words_ + r / 64];
    if (m & bit) --pr.resident[t], m &= ~bit;
  }
  demote(value);  // a record keeps one holder at least
  return false;
}

void ReplicaIndex::stored(ReplicaId r, const cache::BlockHash& hash, policies::Tier tier) {
  check(r);
  set(r, key_of(hash), tier_index(tier), true);
}

void ReplicaIndex::removed(ReplicaId r, const cache::BlockHash& hash, policies::Tier tier) {
  check(r);
  set(r, key_of(hash), tier_index(tier), false);
}

void ReplicaIndex::moved(ReplicaId r, const cache::BlockHash& hash, policies::Tier from, policies::Tier to) {
  check(r);
  const uint64_t key = key_of(hash);
  // Stored first, so an entry held only here is not erased and re-inserted.
  set(r, key, tier_index(to), true);
  if (from != to) set(r, key, tier_index(from), false);
}

void ReplicaIndex::cleared(ReplicaId r) {
  check(r);
  table_.erase_if([&](uint64_t, uint64_t& value) { return drop(r, value); });
}

void ReplicaIndex::shared_stored(const cache::BlockHash& hash) {
  bool fresh = false;
  shared_.insert(key_of(hash), fresh) = 1;
}

void ReplicaIndex::shared_removed(const cache::BlockHash& hash) { shared_.erase(key_of(hash)); }

void ReplicaIndex::shared_cleared() { shared_ = BlockTable(); }

int64_t ReplicaIndex::resident(ReplicaId r, policies::Tier tier) const {
  check(r);
  return replicas_[static_cast<size_t>(r)].resident[tier_index(tier)];
}

size_t ReplicaIndex::memory_bytes() const {
  return table_.memory_bytes() + shared_.memory_bytes() + records_.capacity() * sizeof(uint64_t) +
         free_records_.capacity() * sizeof(uint64_t);
}

// One block's state for the replicas still matching: per tier (device,
// host, disk, shared) the mask of those that would serve it from there,
// each replica in one tier at most (its fastest).
template <int kWords>
struct ReplicaIndex::BlockState {
  static constexpr int kMax = kWords ? kWords : kMaxWords;
  uint64_t tier[4][kMax];
};

// lookup's search: probes the chain at 0, 1, 3, 7, ... (2^k - 1) until no
// replica holds the probed block (or the chain ends), then bisects every
// interval whose two ends differ in state; an interval whose ends agree is
// credited whole with that state. Left to right, so that `alive` (the
// replicas that held every probed block so far) only shrinks.
template <int kWords>
class ReplicaIndex::Search {
 public:
  using State = BlockState<kWords>;
  static constexpr int kMax = State::kMax;

  Search(const ReplicaIndex& idx, std::span<const cache::BlockHash> chain, std::span<Residency> out)
      : idx_(idx), chain_(chain), out_(out), W_(kWords ? kWords : idx.words_), any_shared_(!idx.shared_.empty()) {}

  void run() {
    const size_t n = chain_.size();
    if (n == 0) return;
    // The gallop's probes are known in advance: all their misses at once.
    for (size_t i = 0; i < n; i = 2 * i + 1) prefetch(i);
    prefetch(n - 1);
    State a_state, b_state;
    if (!probe(0, idx_.present_.data(), a_state)) return;
    size_t a = 0;
    while (a + 1 < n) {
      const size_t b = std::min(2 * a + 1, n - 1);
      probe(b, alive_of(a_state).data(), b_state);
      settle(a, a_state, b, b_state);
      if (!any_of(b_state)) return flush();
      a = b;
      a_state = b_state;
    }
    credit(a_state, 1);  // the chain's last block, held
    flush();
  }

 private:
  using Mask = std::array<uint64_t, kMax>;

  void prefetch(size_t i) const {
    const uint64_t key = key_of(chain_[i]);
    idx_.table_.prefetch(key);
    if (any_shared_) idx_.shared_.prefetch(key);
  }

  // The replicas in any tier of s.
  Mask alive_of(const State& s) const {
    Mask m{};
    for (int w = 0; w < W_; ++w) m[w] = s.tier[0][w] | s.tier[1][w] | s.tier[2][w] | s.tier[3][w];
    return m;
  }

  // Block i's state restricted to `alive`; false when no replica holds it.
  bool probe(size_t i, const uint64_t* alive, State& s) const {
    const uint64_t key = key_of(chain_[i]);
    const uint64_t* v = idx_.table_.find(key);
    const bool shared = any_shared_ && idx_.shared_.find(key) != nullptr;
    uint64_t held[kTiers][kMax];
    for (auto& t : held) std::fill_n(t, W_, 0);
    if (v && is_inline(*v)) {
      const ReplicaId h = holder(*v);
      for (int t = 0; t < kTiers; ++t)
        if (tiers_of(*v) >> t & 1) held[t][h / 64] = uint64_t{1} << (h % 64);
    } else if (v) {
      const uint64_t* masks = idx_.record(*v);
      for (int t = 0; t < kTiers; ++t) std::copy_n(masks + t * W_, W_, held[t]);
    }
    bool any = false;
    for (int w = 0; w < W_; ++w) {
      const uint64_t d = held[0][w] & alive[w];
      const uint64_t h = held[1][w] & alive[w] & ~d;
      const uint64_t k = held[2][w] & alive[w] & ~(d | h);
      const uint64_t sh = shared ? alive[w] & ~(d | h | k) : 0;
      s.tier[0][w] = d, s.tier[1][w] = h, s.tier[2][w] = k, s.tier[3][w] = sh;
      any |= (d | h | k | sh) != 0;
    }
    return any;
  }

  bool same(const State& x, const State& y) const {
    for (int t = 0; t < 4; ++t)
      for (int w = 0; w < W_; ++w)
        if (x.tier[t][w] != y.tier[t][w]) return false;
    return true;
  }

  bool any_of(const State& s) const {
    const Mask m = alive_of(s);
    for (int w = 0; w < W_; ++w)
      if (m[w]) return true;
    return false;
  }

  // Credits blocks a .. b-1, given the states of a and of b (both within
  // the replicas alive at a), probing between them where they differ; sb
  // ends restricted to the replicas that held every block probed on the
  // way (what b's state is for the next interval).
  void settle(size_t a, const State& sa, size_t b, State& sb) {
    if (same(sa, sb) || b == a + 1) return credit(sa, static_cast<int32_t>(b - a));
    const size_t m = a + (b - a) / 2;
    // The next level's probes too: whichever halves need them, their
    // misses overlap this one's.
    if (m - a > 1) prefetch(a + (m - a) / 2);
    if (b - m > 1) prefetch(m + (b - m) / 2);
    State sm;
    probe(m, alive_of(sa).data(), sm);
    settle(a, sa, m, sm);
    // From m on, only the replicas that hold m still match.
    const Mask alive = alive_of(sm);
    for (int t = 0; t < 4; ++t)
      for (int w = 0; w < W_; ++w) sb.tier[t][w] &= alive[w];
    settle(m, sm, b, sb);
  }

  // Consecutive credits of one state are summed, then added to out once.
  void credit(const State& s, int32_t blocks) {
    if (run_len_ > 0 && same(s, run_)) {
      run_len_ += blocks;
      return;
    }
    flush();
    run_ = s;
    run_len_ = blocks;
  }

  void flush() {
    if (run_len_ == 0) return;
    for (int t = 0; t < 4; ++t)
      for (int w = 0; w < W_; ++w)
        for (uint64_t m = run_.tier[t][w]; m; m &= m - 1) {
          Residency& res = out_[static_cast<size_t>(w * 64 + std::countr_zero(m))];
          (t == 0 ? res.device : t == 1 ? res.host : t == 2 ? res.disk : res.shared) += run_len_;
        }
    run_len_ = 0;
  }

  const ReplicaIndex& idx_;
  std::span<const cache::BlockHash> chain_;
  std::span<Residency> out_;
  const int W_;
  const bool any_shared_;
  State run_{};
  int32_t run_len_ = 0;
};

void ReplicaIndex::lookup(std::span<const cache::BlockHash> chain, std::span<Residency> out) const {
  if (out.size() < static_cast<size_t>(max_replicas_))
    throw RouteError("a lookup needs room for " + std::to_string(max_replicas_) + " replicas");
  std::fill(out.begin(), out.end(), Residency{});
  // Up to 64 replicas (one word per mask), the loops over words vanish.
  if (words_ == 1) Search<1>(*this, chain, out).run();
  else Search<0>(*this, chain, out).run();
}

void ReplicaIndex::lookup_exact(std::span<const cache::BlockHash> chain, std::span<Residency> out) const {
  if (out.size() < static_cast<size_t>(max_replicas_))
    throw RouteError("a lookup needs room for " + std::to_string(max_replicas_) + " replicas");
  std::fill(out.begin(), out.end(), Residency{});
  if (words_ == 1) walk<1>(chain, out);
  else walk<0>(chain, out);
}

template <int kWords>
void ReplicaIndex::walk(std::span<const cache::BlockHash> chain, std::span<Residency> out) const {
  const int W = kWords ? kWords : words_;
  constexpr int kMax = kWords ? kWords : kMaxWords;
  // alive: the replicas that hold every block so far. Consecutive blocks
  // with the same tier masks form a run, credited once when it ends (a
  // chain is mostly long runs: the shared head, then one replica's tail).
  uint64_t alive[kMax], run[4][kMax] = {}, cur[4][kMax];
  std::copy_n(present_.data(), W, alive);
  int32_t run_len = 0;
  const auto credit = [&] {
    if (run_len == 0) return;
    for (int t = 0; t < 4; ++t)
      for (int w = 0; w < W; ++w)
        for (uint64_t m = run[t][w]; m; m &= m - 1) {
          Residency& res = out[static_cast<size_t>(w * 64 + std::countr_zero(m))];
          (t == 0 ? res.device : t == 1 ? res.host : t == 2 ? res.disk : res.shared) += run_len;
        }
  };
  constexpr size_t kAhead = 16;  // about a DRAM latency of blocks ahead
  const bool any_shared = !shared_.empty();
  for (size_t i = 0; i < std::min(kAhead, chain.size()); ++i) table_.prefetch(key_of(chain[i]));
  for (size_t i = 0; i < chain.size(); ++i) {
    if (i + kAhead < chain.size()) table_.prefetch(key_of(chain[i + kAhead]));
    const uint64_t key = key_of(chain[i]);
    const uint64_t* v = table_.find(key);
    const bool shared = any_shared && shared_.find(key) != nullptr;
    if (!v && !shared) break;
    // The tiers' masks of this block: from the record, or the inline holder.
    uint64_t held[kTiers][kMax];
    for (auto& t : held) std::fill_n(t, W, 0);
    if (v && is_inline(*v)) {
      const ReplicaId h = holder(*v);
      for (int t = 0; t < kTiers; ++t)
        if (tiers_of(*v) >> t & 1) held[t][h / 64] = uint64_t{1} << (h % 64);
    } else if (v) {
      const uint64_t* masks = record(*v);
      for (int t = 0; t < kTiers; ++t) std::copy_n(masks + t * W, W, held[t]);
    }
    bool any = false, same = true;
    for (int w = 0; w < W; ++w) {
      const uint64_t d = held[0][w] & alive[w];
      const uint64_t h = held[1][w] & alive[w] & ~d;
      const uint64_t k = held[2][w] & alive[w] & ~(d | h);
      const uint64_t s = shared ? alive[w] & ~(d | h | k) : 0;
      cur[0][w] = d, cur[1][w] = h, cur[2][w] = k, cur[3][w] = s;
      same &= d == run[0][w] && h == run[1][w] && k == run[2][w] && s == run[3][w];
      alive[w] = d | h | k | s;
      any |= alive[w] != 0;
    }
    if (!any) break;
    if (!same) {
      credit();
      for (int t = 0; t < 4; ++t) std::copy_n(cur[t], W, run[t]);
      run_len = 0;
    }
    ++run_len;
  }
  credit();
}

}  // namespace kvgate::route
