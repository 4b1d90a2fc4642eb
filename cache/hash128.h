// A 128-bit value: block hashes (XXH3-128), cache scopes and model
// fingerprints all have this shape. Plain data: comparable, ordered, and
// usable as an unordered_map key (its bits are already a hash).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>

namespace kvgate::cache {

struct Hash128 {
  uint64_t lo = 0, hi = 0;
  friend bool operator==(const Hash128&, const Hash128&) = default;
  friend auto operator<=>(const Hash128&, const Hash128&) = default;
};

struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return static_cast<size_t>(h.lo ^ (h.hi * 0x9e3779b97f4a7c15ull)); }
};

using BlockHash = Hash128;         // one link of a block hash chain
using ScopeId = Hash128;           // a cache scope: opaque, assigned by the server (a tenant, or tenants that share)
using ModelFingerprint = Hash128;  // the model whose K/V a block holds

}  // namespace kvgate::cache
