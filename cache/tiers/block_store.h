// BlockStore: a tier that keeps sealed block records (block_record.h) out of
// the engine's memory: RocksDB on the local disk today (disk_tier.h), a
// shared Redis tier later. The mover sees only this, so the engine's
// libraries link no database.
//
// Thread-safe. Nothing here blocks on the disk except get(): enqueue()
// copies the record into the store's write queue, or refuses.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "cache/tiers/block_record.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_key.h"
#include "policies/ids.h"

namespace kvgate::cache {

class BlockStore {
 public:
  virtual ~BlockStore() = default;
  virtual const KvIdentity& identity() const = 0;
  virtual bool contains(const TierKey& key) const = 0;
  // Queues a copy of `record` to be written; false when refused (queue full,
  // already stored): counted by the store, never waited on.
  virtual bool enqueue(std::span<const std::byte> record, TenantId owner) = 0;
  // Reads a record (blocking). nullopt: not stored, or the read failed.
  virtual std::optional<std::vector<std::byte>> get(const TierKey& key) = 0;
  // Told each record get_many reads (its index in `keys`), on the thread
  // that read it, right after the read: a caller checks the record there,
  // while its bytes are in that core's cache, and several at once where the
  // store reads several at once. It may take the record (move it out).
  using OnRead = std::function<void(size_t index, std::optional<std::vector<std::byte>>& record)>;
  // Several records (a chain's next blocks), in the order given. A store
  // that can keeps several reads in flight; this default reads one by one.
  virtual std::vector<std::optional<std::vector<std::byte>>> get_many(std::span<const TierKey> keys,
                                                                      const OnRead& on_read) {
    std::vector<std::optional<std::vector<std::byte>>> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      out[i] = get(keys[i]);
      if (on_read) on_read(i, out[i]);
    }
    return out;
  }
  std::vector<std::optional<std::vector<std::byte>>> get_many(std::span<const TierKey> keys) {
    return get_many(keys, {});
  }
  // A record that failed verification: deleted and counted under `why`.
  virtual void drop_corrupt(const TierKey& key, RecordFault why) = 0;
};

}  // namespace kvgate::cache
