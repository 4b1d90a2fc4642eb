// S3-FIFO over two intrusive queues of candidates (EntryLists) and two ghost
// lists of content keys.
//
// Invariants: an entry is on the small or the main queue iff it is a
// candidate (released, not hit or removed since); it is on the main queue
// iff it was hit since its insert, or its key was a ghost when it was
// inserted. Each queue runs from least to most recently released. A key is
// on at most one ghost list, at most once; the small ghost holds at most
// ghost x n keys and the main ghost window x n, n = entries tracked
// (inserted, not removed). 0.01 <= share <= 0.9. victim() is the small
// queue's head while that queue holds at least share x n entries (or the main
// queue is empty), else the main queue's head. Every call is O(1) (ghost
// lists: a hash map and a list); not thread-safe.
#include "policies/eviction/s3fifo_policy.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "policies/eviction/entry_lists.h"
#include "policies/eviction/param_check.h"

namespace kvgate::policies {
namespace {

constexpr double kMinShare = 0.01, kMaxShare = 0.9;

// Keys of evicted blocks, oldest first, each with the eviction count at which
// it was evicted (so a return can be told to be recent).
class GhostList {
 public:
  void push(uint64_t key, int64_t seq, size_t limit) {
    take(key);
    order_.emplace_back(key, seq);
    where_.emplace(key, std::prev(order_.end()));
    trim(limit);
  }
  std::optional<int64_t> take(uint64_t key) {
    auto it = where_.find(key);
    if (it == where_.end()) return std::nullopt;
    const int64_t seq = it->second->second;
    order_.erase(it->second);
    where_.erase(it);
    return seq;
  }
  void trim(size_t limit) {
    while (where_.size() > limit) {
      where_.erase(order_.front().first);
      order_.pop_front();
    }
  }
  size_t size() const { return where_.size(); }

 private:
  std::list<std::pair<uint64_t, int64_t>> order_;
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, int64_t>>::iterator> where_;
};

class S3FifoPolicy final : public EvictionPolicy {
 public:
  explicit S3FifoPolicy(const S3FifoParams& p) : p_(p), share_(std::clamp(p.small, kMinShare, kMaxShare)) {}

  std::string_view name() const override { return "s3fifo"; }

  void on_insert(EntryId id, const EntryInfo& info) override {
    if (id < 0) throw std::invalid_argument("s3fifo: negative entry id");
    lists_.grow(id);
    if (static_cast<size_t>(id) >= key_.size()) {
      key_.resize(static_cast<size_t>(id) + 1, 0);
      main_.resize(key_.size(), 0);
      tracked_.resize(key_.size(), 0);
    }
    if (tracked_[id]) forget(id);  // a reused id: whatever it was before is gone
    tracked_[id] = 1;
    ++n_;
    key_[id] = info.key;
    main_[id] = 0;
    if (info.key == 0) return;
    const double window = p_.window * static_cast<double>(n_);
    if (auto seq = small_ghost_.take(info.key)) {
      main_[id] = 1;
      if (static_cast<double>(small_evictions_ - *seq) < window) adapt(+1);
    } else if (auto mseq = main_ghost_.take(info.key)) {
      main_[id] = 1;
      if (static_cast<double>(main_evictions_ - *mseq) < window) adapt(-1);
    }
  }
  void on_hit(EntryId id) override {
    checked(id);
    main_[id] = 1;
    lists_.unlink(id);
  }
  void on_release(EntryId id) override { lists_.push_back(main_[checked(id)] ? kMain : kSmall, id); }
  void on_remove(EntryId id) override {
    checked(id);
    const int list = lists_.list_of(id);
    forget(id);
    if (key_[id] == 0) return;
    const auto n = static_cast<double>(n_);
    if (list == kSmall) small_ghost_.push(key_[id], ++small_evictions_, static_cast<size_t>(p_.ghost * n));
    if (list == kMain) main_ghost_.push(key_[id], ++main_evictions_, static_cast<size_t>(p_.window * n));
    small_ghost_.trim(static_cast<size_t>(p_.ghost * n));
    main_ghost_.trim(static_cast<size_t>(p_.window * n));
  }

  std::optional<EntryId> victim() const override {
    const EntryId v = pick(lists_.size(kSmall), lists_.size(kMain), n_, lists_.front(kSmall), lists_.front(kMain));
    if (v == EntryLists::kNone) return std::nullopt;
    return v;
  }
  int64_t candidates() const override { return lists_.size(kSmall) + lists_.size(kMain); }

  std::vector<EntryId> eviction_order() const override {
    // Replays victim(); on_remove(victim) on counts alone: removing a
    // candidate changes nothing but the queue sizes and n.
    std::vector<EntryId> out;
    int64_t s = lists_.size(kSmall), m = lists_.size(kMain), n = n_;
    EntryId si = lists_.front(kSmall), mi = lists_.front(kMain);
    out.reserve(static_cast<size_t>(s + m));
    while (s + m > 0) {
      const EntryId v = pick(s, m, n, si, mi);
      out.push_back(v);
      if (v == si) si = lists_.next(si), --s;
      else mi = lists_.next(mi), --m;
      --n;
    }
    return out;
  }

  PolicyParams params() const override {
    return {{"small", p_.small}, {"ghost", p_.ghost}, {"window", p_.window}, {"step", p_.step}, {"adapt", p_.adapt ? 1.0 : 0.0}};
  }

  // For tests: the small queue's current share.
  double share() const { return share_; }

 private:
  static constexpr int kSmall = 0, kMain = 1;

  EntryId pick(int64_t s, int64_t m, int64_t n, EntryId small_head, EntryId main_head) const {
    if (s > 0 && (static_cast<double>(s) >= share_ * static_cast<double>(n) || m == 0)) return small_head;
    if (m > 0) return main_head;
    return EntryLists::kNone;
  }
  EntryId checked(EntryId id) const {
    if (!lists_.known(id) || !tracked_[id]) throw std::invalid_argument("s3fifo: unknown entry id " + std::to_string(id));
    return id;
  }
  void forget(EntryId id) {
    lists_.unlink(id);
    tracked_[id] = 0;
    --n_;
  }
  void adapt(int direction) {
    if (!p_.adapt || n_ <= 0) return;
    share_ = std::clamp(share_ + direction * p_.step / static_cast<double>(n_), kMinShare, kMaxShare);
  }

  const S3FifoParams p_;
  double share_;
  EntryLists lists_{2};
  std::vector<uint64_t> key_;
  std::vector<uint8_t> main_, tracked_;
  int64_t n_ = 0;
  GhostList small_ghost_, main_ghost_;
  int64_t small_evictions_ = 0, main_evictions_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_s3fifo_policy(const S3FifoParams& p) {
  check_param(p.small > 0 && p.small < 1, "s3fifo", "small", "in (0, 1)", p.small);
  check_param(p.ghost >= 0 && p.ghost <= 1000, "s3fifo", "ghost", "in [0, 1000]", p.ghost);
  check_param(p.window > 0 && p.window <= 1000, "s3fifo", "window", "in (0, 1000]", p.window);
  check_param(p.step >= 0 && p.step <= 1e6, "s3fifo", "step", "in [0, 1e6]", p.step);
  return std::make_unique<S3FifoPolicy>(p);
}

}  // namespace kvgate::policies
