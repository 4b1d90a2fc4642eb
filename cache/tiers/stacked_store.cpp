#include "cache/tiers/stacked_store.h"

#include <stdexcept>

namespace kvgate::cache {

StackedStore::StackedStore(std::shared_ptr<BlockStore> upper, std::shared_ptr<BlockStore> lower)
    : upper_(std::move(upper)), lower_(std::move(lower)) {
  if (!upper_ || !lower_) throw std::invalid_argument("StackedStore: both stores are required");
  if (!(upper_->identity() == lower_->identity()))
    throw std::invalid_argument("StackedStore: the two stores hold blocks of different KV identities");
}

bool StackedStore::contains(const TierKey& key) const { return upper_->contains(key) || lower_->contains(key); }

bool StackedStore::enqueue(std::span<const std::byte> record, TenantId owner) {
  const bool up = upper_->enqueue(record, owner);
  const bool low = lower_->enqueue(record, owner);
  return up || low;
}

std::optional<std::vector<std::byte>> StackedStore::get(const TierKey& key) {
  return std::move(get_many(std::span(&key, 1)).front());
}

// The upper store is asked only for what it holds (so that its misses count
// its own misses, not the lower store's hits); whatever it could not give
// goes to the lower store in one call.
// A record the upper store does not give is told (on_read) only once the
// lower store has answered for it.
std::vector<std::optional<std::vector<std::byte>>> StackedStore::get_many(std::span<const TierKey> keys,
                                                                          const OnRead& on_read) {
  std::vector<std::optional<std::vector<std::byte>>> out(keys.size());
  std::vector<TierKey> up, low;
  std::vector<size_t> up_at, low_at;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool held = upper_->contains(keys[i]);
    (held ? up : low).push_back(keys[i]);
    (held ? up_at : low_at).push_back(i);
  }
  if (!up.empty()) {
    std::vector<char> served(up.size(), 0);  // not vector<bool>: written from the store's reading threads
    std::vector<std::optional<std::vector<std::byte>>> got =
        upper_->get_many(up, [&](size_t j, std::optional<std::vector<std::byte>>& rec) {
          if (!rec) return;
          served[j] = 1;
          if (on_read) on_read(up_at[j], rec);
        });
    for (size_t j = 0; j < up.size(); ++j) {
      if (served[j]) {
        out[up_at[j]] = std::move(got[j]);
      } else {
        low.push_back(up[j]);
        low_at.push_back(up_at[j]);
      }
    }
  }
  if (low.empty()) return out;
  std::vector<std::optional<std::vector<std::byte>>> got =
      lower_->get_many(low, [&](size_t j, std::optional<std::vector<std::byte>>& rec) {
        if (on_read) on_read(low_at[j], rec);
      });
  for (size_t j = 0; j < low.size(); ++j) out[low_at[j]] = std::move(got[j]);
  return out;
}

void StackedStore::drop_corrupt(const TierKey& key, RecordFault why) {
  (upper_->contains(key) ? upper_ : lower_)->drop_corrupt(key, why);
}

}  // namespace kvgate::cache
