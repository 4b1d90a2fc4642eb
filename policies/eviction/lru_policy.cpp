// LRU over an intrusive doubly linked list of candidates, indexed by entry
// id (ids are small dense integers: block ids), so every event is O(1) and
// allocation-free once the arrays have grown to the largest id.
//
// Invariant: an entry is on the list iff it was released and has not been
// hit or removed since. The list runs from least to most recently released;
// victim() is its head. Not thread-safe: the owning cache tier serialises calls.
#include "policies/eviction/lru_policy.h"

#include <stdexcept>
#include <vector>

namespace kvgate::policies {
namespace {

class LruPolicy final : public EvictionPolicy {
 public:
  std::string_view name() const override { return "lru"; }

  void on_insert(EntryId id, const EntryInfo&) override {
    grow(id);
    unlink(id);  // a reused id: whatever it was before is gone
  }
  void on_hit(EntryId id) override { unlink(checked(id)); }
  void on_release(EntryId id) override {
    unlink(checked(id));
    link_back(id);
  }
  void on_remove(EntryId id) override { unlink(checked(id)); }

  std::optional<EntryId> victim() const override {
    if (head_ == kNone) return std::nullopt;
    return head_;
  }
  int64_t candidates() const override { return count_; }
  std::vector<EntryId> eviction_order() const override {
    std::vector<EntryId> out;
    out.reserve(static_cast<size_t>(count_));
    for (EntryId e = head_; e != kNone; e = next_[e]) out.push_back(e);
    return out;
  }

 private:
  static constexpr EntryId kNone = -1;

  void grow(EntryId id) {
    if (id < 0) throw std::invalid_argument("lru: negative entry id");
    if (static_cast<size_t>(id) >= prev_.size()) {
      prev_.resize(static_cast<size_t>(id) + 1, kNone);
      next_.resize(static_cast<size_t>(id) + 1, kNone);
      listed_.resize(static_cast<size_t>(id) + 1, false);
    }
  }
  EntryId checked(EntryId id) const {
    if (id < 0 || static_cast<size_t>(id) >= prev_.size()) throw std::invalid_argument("lru: unknown entry id");
    return id;
  }
  void unlink(EntryId id) {
    if (!listed_[id]) return;
    (prev_[id] == kNone ? head_ : next_[prev_[id]]) = next_[id];
    (next_[id] == kNone ? tail_ : prev_[next_[id]]) = prev_[id];
    prev_[id] = next_[id] = kNone;
    listed_[id] = false;
    --count_;
  }
  void link_back(EntryId id) {
    prev_[id] = tail_;
    next_[id] = kNone;
    (tail_ == kNone ? head_ : next_[tail_]) = id;
    tail_ = id;
    listed_[id] = true;
    ++count_;
  }

  std::vector<EntryId> prev_, next_;
  std::vector<bool> listed_;
  EntryId head_ = kNone, tail_ = kNone;
  int64_t count_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_lru_policy() { return std::make_unique<LruPolicy>(); }

}  // namespace kvgate::policies
