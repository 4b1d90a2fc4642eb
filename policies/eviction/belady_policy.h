// Belady's offline bound, for the simulator only (`kvgate sim`): evicts the
// candidate whose next use is farthest in the future, a deeper block first
// on a tie (it is worth less: a hit on it needs its parent too), then the
// smaller content key. No online cache can run it: it must be told every
// entry's next use (set_next_use), which only a replay of a known trace
// knows. The registry lists it as offline and will not build it for a
// server.
//
// With prefix chains this is the reference simulator's `opt`
// (../shared/traces/README.md): an offline approximation of the optimum,
// exact for single blocks. Every call is O(log n).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

class BeladyPolicy final : public EvictionPolicy {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  std::string_view name() const override { return "belady"; }
  void on_insert(EntryId id, const EntryInfo& info) override;
  void on_hit(EntryId id) override;
  void on_release(EntryId id) override;
  void on_remove(EntryId id) override;
  std::optional<EntryId> victim() const override;
  int64_t candidates() const override { return static_cast<int64_t>(ranked_.size()); }
  std::vector<EntryId> eviction_order() const override;

  // The simulator's extra call: `id` is next used at `when` (a request
  // number, or kNever). New entries start at kNever until told.
  void set_next_use(EntryId id, int64_t when);

 private:
  struct Rank {
    int64_t next_use;
    int32_t depth;
    uint64_t key;
    EntryId id;
  };
  struct Sooner {  // begin() is the victim: farthest next use, then deepest, then smallest key, then id
    bool operator()(const Rank& a, const Rank& b) const;
  };
  struct Entry {
    bool tracked = false, candidate = false;
    Rank rank{kNever, 0, 0, 0};
  };
  Entry& checked(EntryId id);

  std::vector<Entry> entries_;
  std::set<Rank, Sooner> ranked_;  // the candidates
};

std::unique_ptr<BeladyPolicy> make_belady_policy();

}  // namespace kvgate::policies
