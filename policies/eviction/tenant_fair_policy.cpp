#include "policies/eviction/tenant_fair_policy.h"

#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace kvgate::policies {
namespace {

class TenantFairPolicy final : public EvictionPolicy {
 public:
  TenantFairPolicy(std::function<std::unique_ptr<EvictionPolicy>()> make_inner, PolicyParams shown)
      : make_inner_(std::move(make_inner)), shown_(std::move(shown)) {}

  std::string_view name() const override { return "fair"; }

  void on_insert(EntryId id, const EntryInfo& info) override {
    if (auto it = owner_.find(id); it != owner_.end()) on_remove(id);  // a reused id: forget the old entry
    Share& s = shares_[info.tenant];
    if (!s.inner) s.inner = make_inner_();
    s.inner->on_insert(id, info);
    ++s.held;
    ++held_;
    owner_[id] = info.tenant;
  }
  void on_hit(EntryId id) override { share_of(id).inner->on_hit(id); }
  void on_release(EntryId id) override { share_of(id).inner->on_release(id); }
  void on_remove(EntryId id) override {
    auto it = owner_.find(id);
    if (it == owner_.end()) throw std::invalid_argument("fair: unknown entry id");
    auto s = shares_.find(it->second);
    s->second.inner->on_remove(id);
    --held_;
    if (--s->second.held == 0) shares_.erase(s);  // a tenant with nothing here is owed nothing
    owner_.erase(it);
  }

  std::optional<EntryId> victim() const override {
    const Share* pick = most_over();
    if (!pick) return std::nullopt;
    return pick->inner->victim();
  }
  int64_t candidates() const override {
    int64_t n = 0;
    for (const auto& [t, s] : shares_) n += s.inner->candidates();
    return n;
  }

  // Successive victims: replay the choice on copies of the counts, taking
  // each tenant's candidates in its own inner order.
  std::vector<EntryId> eviction_order() const override {
    struct Replay {
      int64_t held;
      std::vector<EntryId> order;
      size_t next = 0;
    };
    std::map<TenantId, Replay> r;  // ordered as shares_, so ties break as in victim()
    int64_t held = held_;
    for (const auto& [t, s] : shares_) r[t] = {s.held, s.inner->eviction_order()};
    std::vector<EntryId> out;
    for (;;) {
      Replay* best = nullptr;
      int64_t best_over = 0;
      const int64_t tenants = static_cast<int64_t>(r.size());
      for (auto& [t, x] : r) {
        if (x.next >= x.order.size()) continue;
        const int64_t over = x.held * tenants - held;  // held - held/T, scaled by T
        if (!best || over > best_over) best = &x, best_over = over;
      }
      if (!best) return out;
      out.push_back(best->order[best->next++]);
      --best->held;
      --held;
    }
  }

  PolicyParams params() const override { return shown_; }

 private:
  struct Share {
    std::unique_ptr<EvictionPolicy> inner;
    int64_t held = 0;  // the tenant's entries in the tier, referenced or not
  };

  Share& share_of(EntryId id) {
    auto it = owner_.find(id);
    if (it == owner_.end()) throw std::invalid_argument("fair: unknown entry id");
    return shares_.at(it->second);
  }

  // The tenant with candidates furthest over its share (held - held_/T);
  // ties go to the lowest tenant label.
  const Share* most_over() const {
    const Share* best = nullptr;
    int64_t best_over = 0;
    const int64_t tenants = static_cast<int64_t>(shares_.size());
    for (const auto& [t, s] : shares_) {
      if (s.inner->candidates() == 0) continue;
      const int64_t over = s.held * tenants - held_;
      if (!best || over > best_over) best = &s, best_over = over;
    }
    return best;
  }

  std::function<std::unique_ptr<EvictionPolicy>()> make_inner_;
  const PolicyParams shown_;
  std::map<TenantId, Share> shares_;  // ordered: ties break the same way every time
  std::unordered_map<EntryId, TenantId> owner_;
  int64_t held_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_tenant_fair_policy(std::function<std::unique_ptr<EvictionPolicy>()> make_inner,
                                                        PolicyParams shown_params) {
  return std::make_unique<TenantFairPolicy>(std::move(make_inner), std::move(shown_params));
}

}  // namespace kvgate::policies
