// What a KV block holds and how much of it fits: the element type of the
// keys and values, the layout of a block's bytes, and the capacity of a pool
// sized from a memory budget. Header-only: part of the Backend seam.
//
// The element type and layout are part of a block's cache identity (with
// the weights, the block size and the hash scheme): they enter the model
// fingerprint, so a cache written with f32 K/V never matches f16 K/V.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "engine/model_config.h"

namespace kvgate {

enum class KvType : uint8_t { kF32, kF16, kBF16 };

constexpr int64_t kv_type_bytes(KvType t) { return t == KvType::kF32 ? 4 : 2; }
constexpr std::string_view kv_type_name(KvType t) {
  switch (t) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kBF16: return "bf16";
  }
  return "";
}

// The inverse of kv_type_name; throws kvgate::Error for another name.
inline KvType kv_type_from_name(std::string_view name) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kBF16})
    if (kv_type_name(t) == name) return t;
  throw Error("unknown KV element type '" + std::string(name) + "' (expected f32, f16 or bf16)");
}

// How a block's bytes are arranged when copied out of a backend (for the
// tiers and copy-on-write). `name` is versioned: change it whenever the
// arrangement changes, and every cached block of the old one becomes a miss.
struct KvLayout {
  KvType type = KvType::kF32;
  std::string_view name = "layer-major.kv.slot.kvdim.v1";  // per layer: K [slot][kv_dim], then V
};

// A KV pool's size, computed once from (config, element type, block size,
// budget) by kv_capacity(): nowhere else multiplies bytes per token by hand.
struct KvCapacity {
  int64_t bytes_per_token = 0;  // 2 (K and V) x layers x kv_heads x head_dim x element bytes
  int32_t block_size = 0;       // tokens per block
  int64_t block_bytes = 0;      // bytes_per_token x block_size
  int32_t num_blocks = 0;
  int64_t tokens() const { return static_cast<int64_t>(num_blocks) * block_size; }
  int64_t bytes() const { return static_cast<int64_t>(num_blocks) * block_bytes; }
};

constexpr int64_t kv_bytes_per_token(const ModelConfig& c, KvType t) {
  return 2LL * c.n_layers * c.n_kv_heads * c.head_dim * kv_type_bytes(t);
}

// budget_bytes 0 = enough for one full context. Throws kvgate::Error for a
// non-positive block size or a budget below one block.
inline KvCapacity kv_capacity(const ModelConfig& c, KvType t, int32_t block_size, int64_t budget_bytes) {
  if (block_size <= 0) throw Error("block size must be positive");
  KvCapacity cap;
  cap.bytes_per_token = kv_bytes_per_token(c, t);
  cap.block_size = block_size;
  cap.block_bytes = cap.bytes_per_token * block_size;
  const int64_t n = budget_bytes > 0 ? budget_bytes / cap.block_bytes
                                     : (static_cast<int64_t>(c.context_length) + block_size - 1) / block_size;
  if (n < 1)
    throw Error("KV budget of " + std::to_string(budget_bytes) + " bytes is less than one block (" +
                std::to_string(cap.block_bytes) + " bytes)");
  cap.num_blocks = static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX));
  return cap;
}

// The budget that holds exactly `blocks` blocks: for tests and benchmarks
// that size a pool by blocks.
inline int64_t kv_budget_for_blocks(const ModelConfig& c, KvType t, int32_t block_size, int32_t blocks) {
  return kv_bytes_per_token(c, t) * block_size * blocks;
}

}  // namespace kvgate
