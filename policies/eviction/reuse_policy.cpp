// reuse: per-class reuse-time histograms, a density table per class and
// idle-time bucket, and per class an intrusive list of candidates in release
// order.
//
// Invariants: an entry is on exactly one class list iff it is a candidate
// (released, not hit or removed since), the list of the class it was released
// in; each list runs from the oldest release to the newest, and the entries a
// request released in one class are adjacent, deepest first. The clock counts
// releases. victim() is, over the classes, the head of a list or the deepest
// entry of its newest release, whichever has the lowest density at its idle
// time (the older on a tie). A request is what comes between two release
// bursts: its hits and inserts, then its releases (the pool releases a
// request's blocks tail first, so the first release of a burst is its last
// block). Per call: O(1) but victim(), which looks at two entries a class
// plus the newest release's size; every `period` releases the densities are
// recomputed, O(classes x buckets^2). Not thread-safe.
#include "policies/eviction/reuse_policy.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "policies/eviction/param_check.h"

namespace kvgate::policies {
namespace {

constexpr int kTurns = 6;         // turn 1..5, 6 = 6 or later
constexpr int kSizes = 3;         // blocks a request added: <= 2, <= 8, more
constexpr int kClasses = 2 * kTurns * kSizes;
constexpr int kBuckets = 48;
constexpr EntryId kNone = -1;

int size_bucket(int64_t added) { return added <= 2 ? 0 : added <= 8 ? 1 : 2; }

struct Lists {
  std::vector<EntryId> prev, next;
  std::vector<int8_t> list;
  EntryId head[kClasses], tail[kClasses];
  int64_t size[kClasses];

  Lists() {
    std::fill(std::begin(head), std::end(head), kNone);
    std::fill(std::begin(tail), std::end(tail), kNone);
    std::fill(std::begin(size), std::end(size), 0);
  }
  void grow(size_t n) {
    if (n <= prev.size()) return;
    prev.resize(n, kNone);
    next.resize(n, kNone);
    list.resize(n, -1);
  }
  void push_back(int l, EntryId id) {
    prev[id] = tail[l];
    next[id] = kNone;
    (tail[l] == kNone ? head[l] : next[tail[l]]) = id;
    tail[l] = id;
    list[id] = static_cast<int8_t>(l);
    ++size[l];
  }
  void unlink(EntryId id) {
    const int l = list[id];
    if (l < 0) return;
    (prev[id] == kNone ? head[l] : next[prev[id]]) = next[id];
    (next[id] == kNone ? tail[l] : prev[next[id]]) = prev[id];
    prev[id] = next[id] = kNone;
    list[id] = -1;
    --size[l];
  }
};

class ReusePolicy final : public EvictionPolicy {
 public:
  explicit ReusePolicy(const ReuseParams& p) : p_(p) {
    for (int b = 0; b < kBuckets; ++b) lo_[b] = b == 0 ? 0 : p.base * std::pow(p.growth, b - 1);
    for (int b = 0; b < kBuckets; ++b) hi_[b] = b + 1 < kBuckets ? lo_[b + 1] : lo_[b] * p.growth;
    for (auto& row : dens_) std::fill(std::begin(row), std::end(row), 0.0);
    for (auto& row : hist_) std::fill(std::begin(row), std::end(row), 0.0);
    std::fill(std::begin(entered_), std::end(entered_), 0.0);
  }

  std::string_view name() const override { return "reuse"; }

  void on_insert(EntryId id, const EntryInfo& info) override {
    if (id < 0) throw std::invalid_argument("reuse: negative entry id");
    grow(id);
    if (tracked_[id]) forget(id);
    tracked_[id] = 1;
    ++n_;
    key_[id] = info.key;
    depth_[id] = info.depth;
    cls_[id] = -1;
    start_request();
    ++added_;
    turn_[id] = -1;  // set at its first release: the turn of the request that made it
    if (info.key == 0) return;
    auto it = ghost_where_.find(info.key);
    if (it == ghost_where_.end()) return;
    record(it->second->cls, clock_ - it->second->released);
    // A block back from the ghosts tells the conversation's turn as a hit would.
    if (info.depth > deepest_) deepest_ = info.depth, deepest_turn_ = it->second->turn;
    --added_;  // not new content
    ghosts_.erase(it->second);
    ghost_where_.erase(it);
  }

  void on_hit(EntryId id) override {
    checked(id);
    start_request();
    if (lists_.list[id] >= 0) {
      record(cls_[id], clock_ - released_[id]);
      lists_.unlink(id);
    }
    if (depth_[id] > deepest_) deepest_ = depth_[id], deepest_turn_ = turn_[id];
  }

  void on_release(EntryId id) override {
    checked(id);
    bool leaf = false;
    if (!releasing_) {
      releasing_ = true;
      leaf = true;
      ++group_;
      const int turn = (deepest_ >= 0 && deepest_turn_ > 0 ? deepest_turn_ : 0) + 1;
      turn_now_ = turn;
      cls_now_ = (std::min(turn, kTurns) - 1) * kSizes + size_bucket(added_);
    }
    if (turn_[id] < 0) turn_[id] = turn_now_;
    lists_.unlink(id);
    const int c = cls_now_ + (leaf ? kTurns * kSizes : 0);
    cls_[id] = static_cast<int16_t>(c);
    released_[id] = clock_;
    group_of_[id] = group_;
    entered_[c] += 1;
    lists_.push_back(c, id);
    ++clock_;
    if (clock_ % static_cast<int64_t>(p_.period) == 0) recompute();
  }

  void on_remove(EntryId id) override {
    checked(id);
    const int c = cls_[id];
    const uint64_t key = key_[id];
    const int64_t when = released_[id];
    const int32_t turn = turn_[id];
    forget(id);
    if (key == 0 || c < 0 || p_.ghost <= 0) return;
    auto it = ghost_where_.find(key);
    if (it != ghost_where_.end()) ghosts_.erase(it->second), ghost_where_.erase(it);
    ghosts_.push_back({key, when, static_cast<int16_t>(c), turn});
    ghost_where_.emplace(key, std::prev(ghosts_.end()));
    const auto limit = static_cast<size_t>(p_.ghost * static_cast<double>(n_ + 1));
    while (ghost_where_.size() > limit) {
      ghost_where_.erase(ghosts_.front().key);
      ghosts_.pop_front();
    }
  }

  std::optional<EntryId> victim() const override {
    const EntryId v = pick(lists_);
    if (v == kNone) return std::nullopt;
    return v;
  }
  int64_t candidates() const override {
    int64_t s = 0;
    for (int c = 0; c < kClasses; ++c) s += lists_.size[c];
    return s;
  }
  std::vector<EntryId> eviction_order() const override {
    Lists copy = lists_;
    std::vector<EntryId> out;
    for (EntryId v = pick(copy); v != kNone; v = pick(copy)) out.push_back(v), copy.unlink(v);
    return out;
  }
  PolicyParams params() const override {
    return {{"ghost", p_.ghost}, {"base", p_.base}, {"growth", p_.growth}, {"period", p_.period}, {"halflife", p_.halflife}};
  }

 private:
  struct Ghost {
    uint64_t key;
    int64_t released;
    int16_t cls;
    int32_t turn;
  };

  void grow(EntryId id) {
    const auto n = static_cast<size_t>(id) + 1;
    lists_.grow(n);
    if (n <= tracked_.size()) return;
    tracked_.resize(n, 0);
    key_.resize(n, 0);
    depth_.resize(n, 0);
    turn_.resize(n, -1);
    cls_.resize(n, -1);
    released_.resize(n, 0);
    group_of_.resize(n, 0);
  }
  EntryId checked(EntryId id) const {
    if (id < 0 || static_cast<size_t>(id) >= tracked_.size() || !tracked_[id])
      throw std::invalid_argument("reuse: unknown entry id " + std::to_string(id));
    return id;
  }
  void forget(EntryId id) {
    lists_.unlink(id);
    tracked_[id] = 0;
    --n_;
  }
  // A hit or insert after a release burst starts the next request.
  void start_request() {
    if (!releasing_) return;
    releasing_ = false;
    added_ = 0;
    deepest_ = -1;
    deepest_turn_ = 0;
  }
  int bucket(int64_t age) const {
    if (age < p_.base) return 0;
    const int b = 1 + static_cast<int>(std::log(static_cast<double>(age) / p_.base) / std::log(p_.growth));
    return std::min(b, kBuckets - 1);
  }
  void record(int c, int64_t age) {
    if (c < 0) return;
    hist_[c][bucket(age)] += 1;
  }
  void recompute() {
    if (p_.halflife > 0) {
      const double f = std::pow(0.5, p_.period / p_.halflife);
      for (int c = 0; c < kClasses; ++c) {
        entered_[c] *= f;
        for (double& h : hist_[c]) h *= f;
      }
    }
    for (int c = 0; c < kClasses; ++c) {
      double before = 0;  // reuses at idle times below bucket j
      for (int j = 0; j < kBuckets; ++j) {
        const double alive = entered_[c] - before;
        double best = 0, hits = 0, wait = 0;
        if (alive > 0)
          for (int m = j; m < kBuckets; ++m) {
            hits += hist_[c][m];
            wait += hist_[c][m] * ((lo_[m] + hi_[m]) / 2 - lo_[j]);
            const double cost = wait + std::max(0.0, alive - hits) * (hi_[m] - lo_[j]);
            if (cost > 0) best = std::max(best, hits / cost);
          }
        dens_[c][j] = best;
        before += hist_[c][j];
      }
    }
  }

  EntryId pick(const Lists& l) const {
    EntryId best = kNone;
    double best_d = 0;
    int64_t best_t = 0;
    const auto consider = [&](int c, EntryId id) {
      const double d = dens_[c][bucket(clock_ - released_[id])];
      if (best == kNone || d < best_d || (d == best_d && released_[id] < best_t)) best = id, best_d = d, best_t = released_[id];
    };
    for (int c = 0; c < kClasses; ++c) {
      if (l.size[c] == 0) continue;
      consider(c, l.head[c]);
      EntryId y = l.tail[c];
      while (l.prev[y] != kNone && group_of_[l.prev[y]] == group_of_[y]) y = l.prev[y];
      if (y != l.head[c]) consider(c, y);
    }
    return best;
  }

  const ReuseParams p_;
  double lo_[kBuckets], hi_[kBuckets];
  double hist_[kClasses][kBuckets], entered_[kClasses], dens_[kClasses][kBuckets];
  Lists lists_;
  std::vector<uint8_t> tracked_;
  std::vector<uint64_t> key_;
  std::vector<int32_t> depth_, turn_;
  std::vector<int16_t> cls_;
  std::vector<int64_t> released_, group_of_;
  int64_t n_ = 0, clock_ = 0, group_ = 0;
  // The request being served.
  bool releasing_ = true;
  int64_t added_ = 0;
  int32_t deepest_ = -1, deepest_turn_ = 0, turn_now_ = 1, cls_now_ = 0;
  std::list<Ghost> ghosts_;
  std::unordered_map<uint64_t, std::list<Ghost>::iterator> ghost_where_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_reuse_policy(const ReuseParams& p) {
  check_param(p.ghost >= 0 && p.ghost <= 1000, "reuse", "ghost", "in [0, 1000]", p.ghost);
  check_param(p.base >= 1 && p.base <= 1e9, "reuse", "base", "in [1, 1e9]", p.base);
  check_param(p.growth > 1 && p.growth <= 4, "reuse", "growth", "in (1, 4]", p.growth);
  check_param(p.period >= 1 && p.period <= 1e9 && p.period == std::floor(p.period), "reuse", "period",
              "a whole number in [1, 1e9]", p.period);
  check_param(p.halflife >= 0, "reuse", "halflife", "at least 0", p.halflife);
  return std::make_unique<ReusePolicy>(p);
}

}  // namespace kvgate::policies
