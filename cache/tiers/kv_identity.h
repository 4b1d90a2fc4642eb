// KvIdentity: what a stored block's bytes mean. Every record a tier stores
// carries it; a record written under another identity (another model, KV
// layout, element type, block size or hash chaining) is never restored.
//
// Pure data; any thread.
#pragma once

#include <cstdint>

#include "cache/hash128.h"

namespace kvgate::cache {

// Bytes of one K or V element for the engine's KvType value (0 f32, 1 f16,
// 2 bf16); 0 for a value this build does not know.
constexpr int32_t kv_element_bytes(uint8_t kv_type) {
  switch (kv_type) {
    case 0: return 4;
    case 1:
    case 2: return 2;
    default: return 0;
  }
}

struct KvIdentity {
  ModelFingerprint model;          // weights + KV layout (the engine's cache fingerprint)
  int32_t n_layers = 0, n_kv_heads = 0, head_dim = 0;
  uint8_t kv_type = 0;             // the engine's KvType value: 0 f32, 1 f16, 2 bf16
  int32_t block_size = 0;          // tokens per block
  uint32_t hash_scheme = 1;        // version of the block-hash chaining (block_hash.h)

  // K and V of every layer for block_size tokens:
  //   2 * layers * kv_heads * head_dim * element bytes * block_size.
  // 0 when the identity is not a valid one (a count <= 0, an unknown type,
  // or a product past int64: a header read from disk may claim anything).
  int64_t payload_bytes() const {
    const int64_t elem = kv_element_bytes(kv_type);
    if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || block_size <= 0 || elem == 0) return 0;
    int64_t n = 2 * elem;
    for (const int64_t f : {int64_t{n_layers}, int64_t{n_kv_heads}, int64_t{head_dim}, int64_t{block_size}})
      if (__builtin_mul_overflow(n, f, &n)) return 0;
    return n;
  }
  bool valid() const { return payload_bytes() > 0; }
  bool operator==(const KvIdentity&) const = default;
};

// XXH3-64 of the fields (fixed little-endian encoding, so the same in every
// process): the disk index stores it to recognise entries of another identity.
uint64_t identity_digest(const KvIdentity& id);

}  // namespace kvgate::cache
