// The disk tier's RocksDB database: its column families and their options,
// and the format of the index family's values. DiskTier (disk_tier.h) keeps
// one open for its lifetime; purge_disk_tier opens one to delete from it.
//
// Column families: "records" (TierKey bytes -> sealed record, values in blob
// files) and "index" (TierKey bytes -> IndexValue), always written together
// in one WriteBatch, deleted together.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/slice.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policies/ids.h"

namespace kvgate::cache::detail {

// The index column family's value (little-endian):
//   u8 version (1) | u64 identity digest | u64 owner | i32 depth | u64 record bytes | u64 write order
struct IndexValue {
  uint64_t digest = 0;
  TenantId owner = 0;
  int32_t depth = 0;
  uint64_t bytes = 0;
  uint64_t seq = 0;
};
std::string encode_index(const IndexValue& v);
// nullopt for a value of another size or version.
std::optional<IndexValue> decode_index(const rocksdb::Slice& s);

// A TierKey's bytes as a RocksDB key.
inline rocksdb::Slice slice(const std::array<char, 32>& k) { return {k.data(), k.size()}; }

// The database and its column families.
struct DiskDb {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* records = nullptr;
  rocksdb::ColumnFamilyHandle* index = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> all;

  ~DiskDb() { close(); }
  void close();

  // Opens (creating if missing) the database in `dir`, naming every column
  // family on disk (RocksDB refuses to open otherwise; unknown ones from a
  // newer build are opened and left alone, as tenancy/store.cpp does).
  rocksdb::Status open(const std::string& dir, rocksdb::Env* env, bool read_only = false);
};

}  // namespace kvgate::cache::detail
