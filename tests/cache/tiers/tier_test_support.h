// Shared by the tier suites: a small identity, keys, tokens and sealed
// records whose payload is a function of the key (so a reader can tell a
// record that is someone else's from one that is its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cache/block_pool.h"
#include "cache/tiers/block_record.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_key.h"

namespace kvgate::cache::testing {

inline KvIdentity small_identity() {
  KvIdentity id;
  id.model = {0x1111222233334444ull, 0x5555666677778888ull};
  id.n_layers = 2;
  id.n_kv_heads = 2;
  id.head_dim = 8;
  id.kv_type = 1;  // f16
  id.block_size = 4;
  return id;  // payload 2*2*2*8*2*4 = 512 bytes
}

inline ScopeId scope_of(uint64_t tenant) { return {0xabc0000000000000ull + tenant, 0x5c09e0000ull ^ tenant}; }

// Block `i` of a chain in `scope`: hash and parent are functions of (scope, i).
inline BlockKey key_at(const ScopeId& scope, int32_t i) {
  auto h = [&](int32_t j) { return BlockHash{scope.lo * 31 + static_cast<uint64_t>(j) * 0x9e3779b97f4a7c15ull + 1, scope.hi + static_cast<uint64_t>(j)}; };
  return {h(i), i == 0 ? BlockHash{0x5eed, scope.lo} : h(i - 1), scope, i};
}

inline TierKey tier_key(const BlockKey& k) { return {k.scope, k.hash}; }

inline std::vector<TokenId> tokens_for(const BlockKey& k, int32_t block_size) {
  std::vector<TokenId> t(static_cast<size_t>(block_size));
  for (int32_t j = 0; j < block_size; ++j) t[static_cast<size_t>(j)] = static_cast<TokenId>((k.hash.lo >> (j % 8)) + static_cast<uint64_t>(j)) & 0x7fff;
  return t;
}

inline void fill_payload(std::span<std::byte> payload, const BlockKey& k) {
  uint64_t x = k.hash.lo ^ k.hash.hi;
  for (std::byte& b : payload) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<std::byte>(x >> 56);
  }
}

// Seals a record for `k` into `rec` (record_bytes(id) long).
inline void make_record(std::span<std::byte> rec, const BlockKey& k, TenantId owner, const KvIdentity& id) {
  fill_payload(record_payload(rec, id), k);
  const std::vector<TokenId> t = tokens_for(k, id.block_size);
  seal_record(rec, k, owner, id, t);
}

inline std::vector<std::byte> record_for(const BlockKey& k, TenantId owner, const KvIdentity& id) {
  std::vector<std::byte> rec(record_bytes(id));
  make_record(rec, k, owner, id);
  return rec;
}

// check_record against what a lookup of `k` would ask, plus the payload
// being exactly the one written for `k`.
inline RecordFault verify(std::span<const std::byte> rec, const BlockKey& k, const KvIdentity& id) {
  const std::vector<TokenId> t = tokens_for(k, id.block_size);
  return check_record(rec, k, t, id);
}

}  // namespace kvgate::cache::testing
