// Invariant: ranked_ holds exactly the candidates (released, not hit or
// removed since), each under the priority it was given at its release.
// inflation_ never decreases. last_release_ is the depth and priority of the
// release just before, and is cleared by every other call.
#include "policies/eviction/cost_aware_policy.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "policies/eviction/param_check.h"

namespace kvgate::policies {
namespace {

class CostAwarePolicy final : public EvictionPolicy {
 public:
  explicit CostAwarePolicy(const CostAwareParams& p) : p_(p) {}

  std::string_view name() const override { return "cost"; }

  void on_insert(EntryId id, const EntryInfo& info) override {
    if (id < 0) throw std::invalid_argument("cost: negative entry id");
    if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(static_cast<size_t>(id) + 1);
    Entry& e = entries_[id];
    if (e.candidate) ranked_.erase(rank_of(id));  // a reused id: whatever it was before is gone
    e = Entry{true, false, info.depth, info.tier, 1, 0.0};
    last_release_.reset();
  }
  void on_hit(EntryId id) override {
    Entry& e = checked(id);
    if (e.candidate) ranked_.erase(rank_of(id));
    e.candidate = false;
    e.hits = std::min(e.hits + 1, p_.max_hits);
    last_release_.reset();
  }
  void on_release(EntryId id) override {
    Entry& e = checked(id);
    if (e.candidate) return;
    double priority = inflation_ + e.hits * loss(e);
    if (last_release_ && last_release_->first == e.depth + 1) priority = std::max(priority, last_release_->second);
    last_release_.emplace(e.depth, priority);
    e.priority = priority;
    e.candidate = true;
    ranked_.insert(rank_of(id));
  }
  void on_remove(EntryId id) override {
    Entry& e = checked(id);
    if (e.candidate) {
      const Rank r = rank_of(id);
      if (!ranked_.empty() && *ranked_.begin() == r) inflation_ = std::max(inflation_, e.priority);  // the victim
      ranked_.erase(r);
    }
    e = Entry{};
    last_release_.reset();
  }

  std::optional<EntryId> victim() const override {
    if (ranked_.empty()) return std::nullopt;
    return std::get<2>(*ranked_.begin());
  }
  int64_t candidates() const override { return static_cast<int64_t>(ranked_.size()); }
  std::vector<EntryId> eviction_order() const override {
    std::vector<EntryId> out;
    out.reserve(ranked_.size());
    for (const Rank& r : ranked_) out.push_back(std::get<2>(r));
    return out;
  }
  PolicyParams params() const override {
    return {{"depth_weight", p_.depth_weight},
            {"restore_host", p_.restore_host},
            {"restore_disk", p_.restore_disk},
            {"last_tier", p_.last_tier},
            {"max_hits", p_.max_hits}};
  }

 private:
  struct Entry {
    bool tracked = false, candidate = false;
    int32_t depth = 0;
    Tier tier = Tier::kDevice;
    int hits = 0;
    double priority = 0;
  };
  // Lowest priority first; on a tie the deeper block, then the smaller id.
  using Rank = std::tuple<double, int32_t, EntryId>;  // priority, -depth, id

  Rank rank_of(EntryId id) const { return {entries_[id].priority, -entries_[id].depth, id}; }
  Entry& checked(EntryId id) {
    if (id < 0 || static_cast<size_t>(id) >= entries_.size() || !entries_[id].tracked)
      throw std::invalid_argument("cost: unknown entry id " + std::to_string(id));
    return entries_[id];
  }
  double loss(const Entry& e) const {
    const int tier = static_cast<int>(e.tier);
    if (tier < p_.last_tier) return tier + 1 == 1 ? p_.restore_host : p_.restore_disk;
    return 1.0 + p_.depth_weight * e.depth;
  }

  const CostAwareParams p_;
  std::vector<Entry> entries_;
  std::set<Rank> ranked_;
  double inflation_ = 0;
  std::optional<std::pair<int32_t, double>> last_release_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_cost_aware_policy(const CostAwareParams& p) {
  check_param(p.depth_weight >= 0 && p.depth_weight <= 1e6, "cost", "depth_weight", "in [0, 1e6]", p.depth_weight);
  check_param(p.restore_host >= 0 && p.restore_host <= 1e6, "cost", "restore_host", "in [0, 1e6]", p.restore_host);
  check_param(p.restore_disk >= 0 && p.restore_disk <= 1e6, "cost", "restore_disk", "in [0, 1e6]", p.restore_disk);
  check_param(p.last_tier >= 0 && p.last_tier <= 2, "cost", "last_tier", "0 (device), 1 (host) or 2 (disk)", p.last_tier);
  check_param(p.max_hits >= 1 && p.max_hits <= 1000000, "cost", "max_hits", "in [1, 1e6]", p.max_hits);
  return std::make_unique<CostAwarePolicy>(p);
}

}  // namespace kvgate::policies
