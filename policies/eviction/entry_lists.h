// EntryLists: a few intrusive doubly linked lists over dense entry ids (block
// ids), each id on at most one list. push_back, unlink and front are O(1) and
// allocation-free once the arrays have grown to the largest id. The queues
// of the list-based policies (S3-FIFO's small and main queues).
//
// Not thread-safe: the owning policy's tier serialises calls.
#pragma once

#include <cstdint>
#include <vector>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

class EntryLists {
 public:
  static constexpr EntryId kNone = -1;
  static constexpr int8_t kNoList = -1;

  explicit EntryLists(int n_lists) : heads_(static_cast<size_t>(n_lists), kNone), tails_(heads_), sizes_(heads_.size(), 0) {}

  // Makes room for ids up to `id` (>= 0).
  void grow(EntryId id) {
    if (static_cast<size_t>(id) < prev_.size()) return;
    const size_t n = static_cast<size_t>(id) + 1;
    prev_.resize(n, kNone);
    next_.resize(n, kNone);
    list_.resize(n, kNoList);
  }
  bool known(EntryId id) const { return id >= 0 && static_cast<size_t>(id) < prev_.size(); }
  // The list `id` is on, or kNoList.
  int list_of(EntryId id) const { return list_[id]; }
  EntryId front(int list) const { return heads_[list]; }
  EntryId next(EntryId id) const { return next_[id]; }
  int64_t size(int list) const { return sizes_[list]; }

  void push_back(int list, EntryId id) {
    unlink(id);
    prev_[id] = tails_[list];
    next_[id] = kNone;
    (tails_[list] == kNone ? heads_[list] : next_[tails_[list]]) = id;
    tails_[list] = id;
    list_[id] = static_cast<int8_t>(list);
    ++sizes_[list];
  }
  void unlink(EntryId id) {
    const int l = list_[id];
    if (l == kNoList) return;
    (prev_[id] == kNone ? heads_[l] : next_[prev_[id]]) = next_[id];
    (next_[id] == kNone ? tails_[l] : prev_[next_[id]]) = prev_[id];
    prev_[id] = next_[id] = kNone;
    list_[id] = kNoList;
    --sizes_[l];
  }

 private:
  std::vector<EntryId> heads_, tails_;
  std::vector<int64_t> sizes_;
  std::vector<EntryId> prev_, next_;
  std::vector<int8_t> list_;
};

}  // namespace kvgate::policies
