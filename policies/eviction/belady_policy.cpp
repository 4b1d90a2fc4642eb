// Invariant: ranked_ holds exactly the candidates' ranks (released, not hit
// or removed since), each under its entry's current next use.
#include "policies/eviction/belady_policy.h"

#include <stdexcept>
#include <string>
#include <tuple>

namespace kvgate::policies {

bool BeladyPolicy::Sooner::operator()(const Rank& a, const Rank& b) const {
  return std::tie(b.next_use, b.depth, a.key, a.id) < std::tie(a.next_use, a.depth, b.key, b.id);
}

BeladyPolicy::Entry& BeladyPolicy::checked(EntryId id) {
  if (id < 0 || static_cast<size_t>(id) >= entries_.size() || !entries_[id].tracked)
    throw std::invalid_argument("belady: unknown entry id " + std::to_string(id));
  return entries_[id];
}

void BeladyPolicy::on_insert(EntryId id, const EntryInfo& info) {
  if (id < 0) throw std::invalid_argument("belady: negative entry id");
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(static_cast<size_t>(id) + 1);
  Entry& e = entries_[id];
  if (e.candidate) ranked_.erase(e.rank);  // a reused id: whatever it was before is gone
  e = Entry{true, false, Rank{kNever, info.depth, info.key, id}};
}

void BeladyPolicy::on_hit(EntryId id) {
  Entry& e = checked(id);
  if (e.candidate) ranked_.erase(e.rank);
  e.candidate = false;
}

void BeladyPolicy::on_release(EntryId id) {
  Entry& e = checked(id);
  if (e.candidate) return;
  e.candidate = true;
  ranked_.insert(e.rank);
}

void BeladyPolicy::on_remove(EntryId id) {
  Entry& e = checked(id);
  if (e.candidate) ranked_.erase(e.rank);
  e = Entry{};
}

void BeladyPolicy::set_next_use(EntryId id, int64_t when) {
  Entry& e = checked(id);
  if (e.candidate) ranked_.erase(e.rank);
  e.rank.next_use = when;
  if (e.candidate) ranked_.insert(e.rank);
}

std::optional<EntryId> BeladyPolicy::victim() const {
  if (ranked_.empty()) return std::nullopt;
  return ranked_.begin()->id;
}

std::vector<EntryId> BeladyPolicy::eviction_order() const {
  std::vector<EntryId> out;
  out.reserve(ranked_.size());
  for (const Rank& r : ranked_) out.push_back(r.id);
  return out;
}

std::unique_ptr<BeladyPolicy> make_belady_policy() { return std::make_unique<BeladyPolicy>(); }

}  // namespace kvgate::policies
