// TierKey: what every tier below the device indexes a block by. The scope is
// part of the key, so no tier can hand a block to another tenant's lookup even
// if two chain hashes collided (a collision across scopes is a different key).
//
// Pure data; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "cache/hash128.h"

namespace kvgate::cache {

struct TierKey {
  ScopeId scope;
  BlockHash hash;
  friend bool operator==(const TierKey&, const TierKey&) = default;

  // The RocksDB key: scope (lo, hi) then hash (lo, hi), each a little-endian
  // u64. Keys of one scope are contiguous in the database.
  std::array<char, 32> bytes() const {
    std::array<char, 32> out{};
    const uint64_t parts[4] = {scope.lo, scope.hi, hash.lo, hash.hi};
    for (int i = 0; i < 4; ++i)
      for (int b = 0; b < 8; ++b) out[static_cast<size_t>(i * 8 + b)] = static_cast<char>((parts[i] >> (8 * b)) & 0xff);
    return out;
  }
  // The inverse of bytes(); false unless exactly 32 bytes.
  static bool from_bytes(const char* data, size_t size, TierKey* out) {
    if (size != 32) return false;
    uint64_t parts[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i)
      for (int b = 0; b < 8; ++b)
        parts[i] |= uint64_t{static_cast<unsigned char>(data[i * 8 + b])} << (8 * b);
    *out = TierKey{{parts[0], parts[1]}, {parts[2], parts[3]}};
    return true;
  }
};

struct TierKeyHasher {
  size_t operator()(const TierKey& k) const {
    // Both halves are already hashes (XXH3): mixing them is enough.
    return Hash128Hasher{}(k.hash) ^ (Hash128Hasher{}(k.scope) * 0xbf58476d1ce4e5b9ull);
  }
};

}  // namespace kvgate::cache
