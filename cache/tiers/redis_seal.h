// RedisSeal: what keeps the shared Redis tier's contents private to the
// replicas that hold the cluster key file, and unforgeable by anyone else
// who reaches Redis.
//
// Each record is sealed with AES-256-GCM before it is SET: the value is
//
//   "KVGS"  version u8 (1)  key id u32 (little-endian)  nonce (12, random)
//   ciphertext (the record)  tag (16)
//
// with the record's whole Redis key name as associated data, so a value
// moved under another key, altered, planted, or sealed under a key this
// replica does not hold, opens to nothing: a counted miss, never served.
//
// Key names carry no scope and no chain hash in the clear: both are keyed
// tags (HMAC-SHA256, truncated) under a names key, so a reader of Redis
// cannot tell whose blocks it sees, nor compute a tenant's key names.
//
// The key file (mode 0600, or refused), one entry per line, '#' comments:
//
//   names <64 hex digits>      the names key; never rotated (a new one
//                              starts the tier cold: every name changes)
//   key <id> <64 hex digits>   the first key line seals new records; every
//                              key line opens records sealed under its id
//
// A rotation adds a new first key line on every replica and keeps the old
// one until its records have aged out of Redis (maxmemory LRU, or
// redis_ttl_s), then drops it.
//
// Immutable once made: any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash128.h"

namespace kvgate::cache {

using SealKey = std::array<uint8_t, 32>;

struct RedisKeys {
  SealKey names{};
  std::vector<std::pair<uint32_t, SealKey>> keys;  // first: the sealing key
};

// Throws kvgate::Error naming the file (and line) when it cannot be read,
// is open to other users, or holds a bad line, no names key or no key.
RedisKeys read_redis_keys(const std::string& path);

class RedisSeal {
 public:
  // Throws std::invalid_argument without a key.
  explicit RedisSeal(RedisKeys keys);

  std::vector<std::byte> seal(std::span<const std::byte> record, std::string_view name) const;
  // The record, or nothing when `value` is not one sealed for `name` under
  // a key held here.
  std::optional<std::vector<std::byte>> open(std::span<const std::byte> value, std::string_view name) const;
  // HMAC-SHA256 of `data` under the names key, the first 16 bytes.
  Hash128 tag(std::span<const std::byte> data) const;

  static constexpr size_t kOverheadBytes = 4 + 1 + 4 + 12 + 16;

 private:
  RedisKeys keys_;
};

}  // namespace kvgate::cache
