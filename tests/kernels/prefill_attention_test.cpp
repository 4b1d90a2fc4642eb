// Prefill attention on the device (the tensor-core kernel for f16 / bf16 K/V,
// the f32 CUDA-core kernel where head_dim is not a multiple of 16) against
// the CPU's gather_kv + attend_rows (engine/cpu/attention.h) on the same
// K/V values: the device pool holds f16 / bf16, the CPU pool those values
// widened back to f32. Chunks of one sequence each, as the step plan tiles
// them (kPrefillTileRows rows a tile, the last one partial): a first chunk of
// 37 rows at position 0, 40 rows after a 1,000-token cached prefix, 16 rows
// after 130; block tables scattered over the pool; query rows read with a
// fused-QKV-like stride. Rows no tile owns, and the output's pad columns,
// must come back untouched.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/cpu/attention.h"
#include "engine/cpu/kv_pool.h"
#include "engine/model/float_convert.h"
#include "kernels/attention_batch.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/prefill_attention.h"
#include "tests/kernels/attention_pools.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

using Shape = AttentionTestShape;

class CudaPrefillAttention : public CudaTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(CudaPrefillAttention, ChunksMatchTheCpu) {
  const Shape sh = GetParam();
  const int32_t B = 16, layers = 2, layer = 1, n_blocks = 96;
  const int32_t hd = sh.head_dim, kvd = sh.kv_heads * hd, qd = sh.heads * hd, G = sh.heads / sh.kv_heads;
  const int64_t q_stride = qd + 48, out_stride = qd + 16;  // rows of a wider matrix, as in the forward pass
  const cuda::KvPoolGeometry g{layers, B, kvd};
  const double tol = hd % 16 != 0               ? kF32Rel  // the f32 CUDA-core kernel: nothing is rounded
                     : sh.type == KvType::kF16 ? kAttentionF16Rel
                                               : kAttentionBF16Rel;

  std::mt19937 rng(7);
  FilledPools pools = random_pools(sh, g, n_blocks, rng);
  const KvPool& cpu = pools.cpu;
  std::normal_distribution<float> nd;

  // The chunks, each its own sequence with its own scattered blocks; a gap
  // row before and after each chunk that no tile owns.
  struct Chunk {
    int32_t start, n;
  };
  const std::vector<Chunk> chunks{{0, 37}, {1000, 40}, {130, 16}};
  constexpr int32_t kGap = 2;
  std::vector<BlockId> ids(n_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<std::vector<BlockId>> tables;
  std::vector<int32_t> flat_tables, first_row;
  std::vector<cuda::PrefillTile> tiles;
  int32_t rows = kGap;
  size_t next = 0;
  for (const Chunk& c : chunks) {
    const int32_t need = (c.start + c.n + B - 1) / B;
    ASSERT_LE(next + static_cast<size_t>(need), ids.size());
    tables.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(next),
                        ids.begin() + static_cast<std::ptrdiff_t>(next + need));
    next += static_cast<size_t>(need);
    const auto table = static_cast<int32_t>(flat_tables.size());
    flat_tables.insert(flat_tables.end(), tables.back().begin(), tables.back().end());
    first_row.push_back(rows);
    for (int32_t i = 0; i < c.n; i += cuda::kPrefillTileRows)
      tiles.push_back({rows + i, std::min(cuda::kPrefillTileRows, c.n - i), c.start + i, table});
    rows += c.n + kGap;
  }

  std::vector<float> q(static_cast<size_t>(rows) * q_stride);
  for (auto& x : q) x = nd(rng);
  constexpr float kUntouched = 7.25f;
  const std::vector<float> out0(static_cast<size_t>(rows) * out_stride, kUntouched);
  auto dpool = to_device(pools.device), dq = to_device(q), dout = to_device(out0), dtiles = to_device(tiles),
       dtables = to_device(flat_tables);
  const cuda::AttentionShape shape{sh.heads, sh.kv_heads, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
  cuda::prefill_attention(g, sh.type, dpool.as(), layer, shape, dq.as<float>(), q_stride, dout.as<float>(),
                          out_stride, dtiles.as<cuda::PrefillTile>(), static_cast<int32_t>(tiles.size()),
                          dtables.as<int32_t>(), nullptr);
  const auto got = to_host<float>(dout, out0.size());

  std::vector<bool> owned(static_cast<size_t>(rows), false);
  for (size_t ci = 0; ci < chunks.size(); ++ci) {
    const Chunk& c = chunks[ci];
    std::vector<float> qc(static_cast<size_t>(c.n) * qd), want(qc.size());
    for (int32_t r = 0; r < c.n; ++r)
      std::copy_n(&q[static_cast<size_t>((first_row[ci] + r) * q_stride)], qd, &qc[static_cast<size_t>(r) * qd]);
    for (int32_t kvh = 0; kvh < sh.kv_heads; ++kvh) {
      GatheredKv gathered;
      gather_kv(cpu, layer, tables[ci], c.start + c.n, kvh, hd, gathered);
      AttendRowsScratch scratch;
      const size_t off = static_cast<size_t>(kvh) * G * hd;
      attend_rows(gathered, c.start, c.n, {hd, G}, &qc[off], &want[off], qd, scratch);
    }
    for (int32_t r = 0; r < c.n; ++r) {
      const int32_t row = first_row[ci] + r;
      owned[static_cast<size_t>(row)] = true;
      expect_rel_close(std::span(got).subspan(static_cast<size_t>(row * out_stride), static_cast<size_t>(qd)),
                       std::span<const float>(want).subspan(static_cast<size_t>(r) * qd, static_cast<size_t>(qd)),
                       tol, "chunk at " + std::to_string(c.start) + ", row " + std::to_string(r));
    }
  }
  int64_t touched = 0;
  for (int32_t row = 0; row < rows; ++row)
    for (int64_t i = owned[static_cast<size_t>(row)] ? qd : 0; i < out_stride; ++i)
      touched += got[static_cast<size_t>(row * out_stride + i)] != kUntouched;
  EXPECT_EQ(touched, 0) << "elements written outside the tiles' rows and heads";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaPrefillAttention,
    ::testing::Values(Shape{32, 8, 128, KvType::kF16}, Shape{32, 8, 128, KvType::kBF16},  // Llama-3-8B, G = 4
                      Shape{8, 2, 64, KvType::kF16}, Shape{8, 2, 64, KvType::kBF16},      // G = 4, head_dim 64
                      Shape{4, 4, 256, KvType::kF16}, Shape{4, 4, 256, KvType::kBF16},    // G = 1, the largest head_dim
                      Shape{16, 2, 64, KvType::kF16}, Shape{16, 2, 64, KvType::kBF16},    // G = 8: eight warps
                      Shape{16, 2, 128, KvType::kBF16},  // G = 8 past the shared-memory budget: 4 heads a block
                      Shape{28, 4, 128, KvType::kF16},   // G = 7 (Qwen2-7B): seven warps
                      Shape{32, 2, 96, KvType::kBF16},   // G = 16: two blocks of 8 heads a KV head
                      Shape{4, 2, 80, KvType::kBF16},    // a multiple of 16, not of 64
                      Shape{8, 4, 8, KvType::kF16}),     // stories260K: the CUDA-core kernel
    [](const auto& param_info) {
      const Shape& s = param_info.param;
      return std::to_string(s.heads) + "h" + std::to_string(s.kv_heads) + "kv" + std::to_string(s.head_dim) + "d_" +
             std::string(kv_type_name(s.type));
    });

}  // namespace
}  // namespace kvgate
