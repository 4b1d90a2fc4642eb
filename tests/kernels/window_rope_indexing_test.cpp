// The index arithmetic the new kernel paths share with the host, run here
// without a device (so these run on every machine, not only by
// ops/gpu-check): the sliding window's first visible position against the
// CPU's, the decode kernel's context parts tiling exactly the window, the
// prefill kernel's first key tile, and RoPE's pairing (adjacent and neox)
// emulated with the kernel's own rope_slot against the CPU's RopeTable.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/cpu/attention.h"
#include "engine/cpu/rowwise.h"
#include "engine/rope_angles.h"
#include "kernels/paged_attention.h"
#include "kernels/rope_kv_store.h"

namespace kvgate {
namespace {

TEST(CudaWindowIndexing, FirstSeenIsTheCpus) {
  for (const int32_t window : {0, 1, 16, 37, 4096})
    for (int32_t pos = 0; pos < 5000; ++pos) {
      const cuda::AttentionShape device{8, 2, 64, 0.125f, 0, window};
      const AttentionShape cpu{64, 4, 0.125f, 0, window};
      ASSERT_EQ(cuda::first_seen(device, pos), cpu.first_seen(pos)) << "window " << window << " pos " << pos;
    }
}

// Every split count the launcher may choose: the parts are contiguous, in
// order, cover [first_seen, pos] exactly, and part 0 is never empty (the
// merge kernel divides by its sum).
TEST(CudaWindowIndexing, DecodePartsTileTheWindow) {
  for (const int32_t window : {0, 1, 16, 37, 100})
    for (const int32_t pos : {0, 1, 4, 15, 16, 17, 36, 37, 38, 99, 100, 101, 299, 999, 2999})
      for (int32_t splits = 1; splits <= cuda::kMaxDecodeSplits; ++splits) {
        const cuda::AttentionShape s{8, 2, 64, 0.125f, 0, window};
        const std::string what =
            "window " + std::to_string(window) + " pos " + std::to_string(pos) + " splits " + std::to_string(splits);
        int32_t at = cuda::first_seen(s, pos);
        for (int32_t p = 0; p < splits; ++p) {
          const cuda::DecodePart part = cuda::decode_part(s, pos, p, splits);
          ASSERT_EQ(part.begin, at) << what << " part " << p;
          ASSERT_LE(part.begin, part.end) << what << " part " << p;
          if (p == 0) {
            ASSERT_LT(part.begin, part.end) << what;
          }
          at = part.end;
        }
        ASSERT_EQ(at, pos + 1) << what;
      }
}

// The prefill kernels start their key walk at the tile holding the first
// row's first visible position; every later row's window starts no earlier
// (first_seen grows with the position), so no visible key is skipped.
TEST(CudaWindowIndexing, PrefillKeyWalkStartsAtOrBeforeEveryRowsWindow) {
  for (const int32_t keys : {32, 64})  // the CUDA-core and tensor-core kernels' key tiles
    for (const int32_t window : {0, 1, 16, 37, 100})
      for (int32_t tile_pos = 0; tile_pos < 400; tile_pos += 3) {
        const cuda::AttentionShape s{8, 2, 64, 0.125f, 0, window};
        const int32_t start = cuda::first_seen(s, tile_pos) / keys * keys;
        for (int32_t r = 0; r < cuda::kPrefillTileRows; ++r)
          ASSERT_LE(start, cuda::first_seen(s, tile_pos + r)) << keys << " " << window << " " << tile_pos << " " << r;
        ASSERT_EQ(start % keys, 0);
      }
}

// rope_store_kv's arithmetic on the host: q's pairs as its q threads take
// them (pair i found by its first value), k's values one by one as its k
// threads do (each reads its pair through rope_slot and keeps its own
// half), against the CPU's RopeTable::apply.
TEST(CudaRopeIndexing, KernelPairingIsTheCpus) {
  struct Shape {
    int32_t head_dim, rope_dim;
    RopeStyle style;
  };
  for (const Shape c : {Shape{8, 8, RopeStyle::kAdjacent}, Shape{128, 64, RopeStyle::kAdjacent},
                       Shape{8, 8, RopeStyle::kHalves}, Shape{64, 64, RopeStyle::kHalves},
                       Shape{128, 64, RopeStyle::kHalves}, Shape{96, 32, RopeStyle::kHalves}}) {
    const int32_t heads = 3, ctx = 2048;
    ModelConfig mc;
    mc.rope_dim = c.rope_dim, mc.rope_base = 10000.0f, mc.context_length = ctx, mc.rope_style = c.style;
    const RopeAngles angles = rope_angles(mc, ctx);
    const cuda::RopeTable table{angles.cos.data(), angles.sin.data(), angles.half, c.style == RopeStyle::kHalves};
    const RopeTable cpu(mc);
    std::mt19937 rng(static_cast<uint32_t>(c.head_dim + c.rope_dim));
    std::normal_distribution<float> nd;
    for (const int32_t pos : {0, 1, 77, 2047}) {
      std::vector<float> x(static_cast<size_t>(heads) * c.head_dim);
      for (auto& v : x) v = nd(rng);
      std::vector<float> want = x;
      cpu.apply(want.data(), pos, heads, c.head_dim);
      const float* cs = angles.cos.data() + static_cast<size_t>(pos) * angles.half;
      const float* sn = angles.sin.data() + static_cast<size_t>(pos) * angles.half;
      const std::string what = std::to_string(c.head_dim) + "/" + std::to_string(c.rope_dim) +
                               (c.style == RopeStyle::kHalves ? " neox" : " adjacent") + " pos " + std::to_string(pos);
      // k: value by value.
      std::vector<float> k(x.size());
      for (size_t e = 0; e < x.size(); ++e) {
        const auto d = static_cast<int32_t>(e % static_cast<size_t>(c.head_dim));
        const cuda::RopeSlot p = cuda::rope_slot(table, d);
        k[e] = x[e];
        if (p.pair < table.half) {
          const size_t first = e - static_cast<size_t>(d) + static_cast<size_t>(p.first);
          const float a = x[first], b = x[first + static_cast<size_t>(p.gap)];
          k[e] = p.second ? a * sn[p.pair] + b * cs[p.pair] : a * cs[p.pair] - b * sn[p.pair];
        }
      }
      // q: pair by pair, in place.
      std::vector<float> q = x;
      for (int32_t j = 0; j < heads * table.half; ++j) {
        const int32_t i = j % table.half;
        const cuda::RopeSlot p = cuda::rope_slot(table, table.halves ? i : 2 * i);
        ASSERT_EQ(p.pair, i) << what;
        ASSERT_FALSE(p.second) << what;
        float* v = q.data() + static_cast<size_t>(j / table.half) * c.head_dim + p.first;
        const float a = v[0], b = v[p.gap];
        v[0] = a * cs[i] - b * sn[i];
        v[p.gap] = a * sn[i] + b * cs[i];
      }
      for (size_t e = 0; e < x.size(); ++e) {
        ASSERT_NEAR(k[e], want[e], 1e-5f * (1.0f + std::abs(want[e]))) << what << " k value " << e;
        ASSERT_NEAR(q[e], want[e], 1e-5f * (1.0f + std::abs(want[e]))) << what << " q value " << e;
      }
    }
  }
}

}  // namespace
}  // namespace kvgate
