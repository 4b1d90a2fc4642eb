// convo: a FIFO of request tails in front of an inner S3-FIFO.
//
// Invariants: an entry is tracked iff it was inserted and not removed since;
// a tracked entry is on the tail list iff it is a candidate released as the
// first of its release burst at depth > 0, and then the inner policy does not
// know it (it was removed from the inner policy at that release, so the inner
// policy's sizes and ghosts count only the other entries); every other
// tracked entry is known to the inner policy. victim() is the tail list's
// head, else the inner policy's victim; eviction_order() is the tail list,
// then the inner order (removing tails changes nothing in the inner policy).
// A request is what comes between two release bursts. Every call is O(1) plus
// the inner policy's; not thread-safe.
#include "policies/eviction/convo_policy.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "policies/eviction/entry_lists.h"

namespace kvgate::policies {
namespace {

class ConvoPolicy final : public EvictionPolicy {
 public:
  explicit ConvoPolicy(std::unique_ptr<EvictionPolicy> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return "convo"; }

  void on_insert(EntryId id, const EntryInfo& info) override {
    if (id < 0) throw std::invalid_argument("convo: negative entry id");
    grow(id);
    if (tails_.list_of(id) == kTails) tails_.unlink(id);  // a reused id: the old entry is gone
    tracked_[id] = 1;
    info_[id] = info;
    releasing_ = false;
    inner_->on_insert(id, info);
  }

  void on_hit(EntryId id) override {
    checked(id);
    releasing_ = false;
    if (tails_.list_of(id) == kTails) {
      // The same prompt again: the tail is a reused block now.
      tails_.unlink(id);
      inner_->on_insert(id, info_[id]);
    }
    inner_->on_hit(id);
  }

  void on_release(EntryId id) override {
    checked(id);
    const bool tail = !releasing_ && info_[id].depth > 0;
    releasing_ = true;
    if (!tail) {
      inner_->on_release(id);
      return;
    }
    inner_->on_remove(id);  // not a candidate there: no ghost, just forgotten
    tails_.push_back(kTails, id);
  }

  void on_remove(EntryId id) override {
    checked(id);
    tracked_[id] = 0;
    if (tails_.list_of(id) == kTails) {
      tails_.unlink(id);
      return;
    }
    inner_->on_remove(id);
  }

  std::optional<EntryId> victim() const override {
    if (tails_.size(kTails) > 0) return tails_.front(kTails);
    return inner_->victim();
  }
  int64_t candidates() const override { return tails_.size(kTails) + inner_->candidates(); }
  std::vector<EntryId> eviction_order() const override {
    std::vector<EntryId> out;
    out.reserve(static_cast<size_t>(candidates()));
    for (EntryId v = tails_.front(kTails); v != EntryLists::kNone; v = tails_.next(v)) out.push_back(v);
    const std::vector<EntryId> rest = inner_->eviction_order();
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  PolicyParams params() const override { return inner_->params(); }

 private:
  static constexpr int kTails = 0;

  void grow(EntryId id) {
    tails_.grow(id);
    if (static_cast<size_t>(id) < tracked_.size()) return;
    tracked_.resize(static_cast<size_t>(id) + 1, 0);
    info_.resize(tracked_.size());
  }
  void checked(EntryId id) const {
    if (id < 0 || static_cast<size_t>(id) >= tracked_.size() || !tracked_[id])
      throw std::invalid_argument("convo: unknown entry id " + std::to_string(id));
  }

  std::unique_ptr<EvictionPolicy> inner_;
  EntryLists tails_{1};
  std::vector<uint8_t> tracked_;
  std::vector<EntryInfo> info_;
  bool releasing_ = true;  // the last call was a release: the next insert or hit starts a request
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_convo_policy(const S3FifoParams& params) {
  return std::make_unique<ConvoPolicy>(make_s3fifo_policy(params));
}

}  // namespace kvgate::policies
