// The attention suites' shared set-up: a test shape, and a KV pool filled
// with random values twice over, on the device in the shape's element type
// (kv_pool_geometry.h's layout) and on the CPU in f32 holding the same
// values (rounded to f16 / bf16 and widened back for those types), so that
// what a comparison tests is the kernels' arithmetic, not the storage's.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "engine/cpu/kv_pool.h"
#include "engine/model/float_convert.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda_testing {

struct AttentionTestShape {
  int32_t heads, kv_heads, head_dim;
  KvType type;
};

struct FilledPools {
  KvPool cpu;
  std::vector<unsigned char> device;  // the bytes to copy to the device pool
};

// Every slot of every block of every layer holds a value, so any table reads
// defined data, and a wrong block, layer or K/V offset reads different data.
inline FilledPools random_pools(const AttentionTestShape& sh, const cuda::KvPoolGeometry& g, int32_t n_blocks,
                                std::mt19937& rng) {
  const size_t elem = static_cast<size_t>(kv_type_bytes(sh.type));
  std::normal_distribution<float> nd;
  FilledPools p{KvPool(KvType::kF32, g.n_layers, n_blocks, g.block_size, g.kv_dim),
                std::vector<unsigned char>(static_cast<size_t>(n_blocks * g.block_elems()) * elem)};
  for (int32_t l = 0; l < g.n_layers; ++l)
    for (int32_t b = 0; b < n_blocks; ++b)
      for (int32_t s = 0; s < g.block_size; ++s)
        for (int32_t kv = 0; kv < 2; ++kv)
          for (int32_t i = 0; i < g.kv_dim; ++i) {
            float x = nd(rng);
            unsigned char* at = p.device.data() + static_cast<size_t>(g.offset(b, l, kv, s) + i) * elem;
            if (sh.type == KvType::kF32) {
              std::memcpy(at, &x, 4);
            } else {
              const uint16_t h = sh.type == KvType::kF16 ? f32_to_f16(x) : f32_to_bf16(x);
              std::memcpy(at, &h, 2);
              x = sh.type == KvType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
            }
            (kv == 0 ? p.cpu.k<float>(l, b, s) : p.cpu.v<float>(l, b, s))[i] = x;
          }
  return p;
}

}  // namespace kvgate::cuda_testing
