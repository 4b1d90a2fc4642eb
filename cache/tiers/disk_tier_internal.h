// What the disk tier's files share: the write queue's entry and how they refuse a database.
//
// In memory: index_ maps exactly the persisted entries of this identity to
// their entry ids; the policy knows exactly those, all candidates (nothing on
// disk is leased: a get copies the record out). queued_ maps the keys of
// records waiting in fifo_ or being written (not cancelled) to them.
#pragma once

#include <rocksdb/status.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/tiers/disk_db.h"
#include "cache/tiers/disk_tier.h"

namespace kvgate::cache {

namespace detail {

[[noreturn]] inline void refuse(const std::string& dir, const rocksdb::Status& s) {
  throw std::runtime_error("kv disk tier at " + dir + ": " + s.ToString());
}

}  // namespace detail

namespace {

using detail::decode_index;
using detail::encode_index;
using detail::IndexValue;
using detail::refuse;
using detail::slice;

}  // namespace

struct DiskTier::Pending {
  TierKey key;
  BlockKey block;
  TenantId owner = 0;
  size_t bytes = 0;                // the record's size (set before the record is copied in)
  std::vector<std::byte> record;   // immutable once seq is set
  uint64_t seq = 0;        // enqueue order (flush waits on it)
  uint64_t write_seq = 0;  // stored in the index
  // Dropped while queued: never indexed. Guarded by the tier's mu_, which an
  // annotation in this struct cannot name.
  bool cancelled = false;
};

}  // namespace kvgate::cache
