// StackedStore: two BlockStores as one, an upper one read first (the
// replica's own RocksDB disk tier) over a lower one (the Redis tier every
// replica shares), for the mover, which sees a single store below the host.
//
//   get       the upper's record, else the lower's (get_many: the upper's
//             misses go to the lower in one call)
//   enqueue   into both (each refuses what it already holds)
//   contains  either
//   drop_corrupt  the store that served the record: the upper when it
//             holds the key, else the lower
//
// A block read from the lower store is not copied into the upper one here:
// the mover verifies a record only after get() returns it, and the upper
// store must never hold bytes nobody verified. (The mover copies what it
// verified into the host tier.) drop_corrupt routes by what the upper holds
// at the time of the call: if the upper took the key between the get() and
// the drop, the upper's good record is dropped instead of the lower's bad
// one, a later miss, never a wrong block.
//
// Thread-safe when both stores are; holds no lock of its own.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cache/tiers/block_store.h"

namespace kvgate::cache {

class StackedStore final : public BlockStore {
 public:
  // Throws std::invalid_argument for a null store or stores of two identities.
  StackedStore(std::shared_ptr<BlockStore> upper, std::shared_ptr<BlockStore> lower);

  const KvIdentity& identity() const override { return upper_->identity(); }
  bool contains(const TierKey& key) const override;
  bool enqueue(std::span<const std::byte> record, TenantId owner) override;
  std::optional<std::vector<std::byte>> get(const TierKey& key) override;
  using BlockStore::get_many;
  std::vector<std::optional<std::vector<std::byte>>> get_many(std::span<const TierKey> keys,
                                                              const OnRead& on_read) override;
  void drop_corrupt(const TierKey& key, RecordFault why) override;

  BlockStore& upper() const { return *upper_; }
  BlockStore& lower() const { return *lower_; }

 private:
  const std::shared_ptr<BlockStore> upper_, lower_;
};

}  // namespace kvgate::cache
