// K/V store into the block-table layout: each value lands in its slot of
// its block, rounded to the pool's element type exactly as the host's
// f32_to_f16 / f32_to_bf16 round it, and nothing else is written.
#include <cstring>
#include <random>

#include "engine/model/float_convert.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/kv_store.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

class CudaKvStore : public CudaTest, public ::testing::WithParamInterface<KvType> {};

TEST_P(CudaKvStore, ValuesLandInTheirSlotsRoundedAsTheHostRounds) {
  const KvType type = GetParam();
  const cuda::KvPoolGeometry g{3, 16, 64};
  const int32_t n_blocks = 6, layer = 1, rows = 20, stride = 3 * g.kv_dim;
  const size_t elem = static_cast<size_t>(kv_type_bytes(type));
  std::mt19937 rng(9);
  std::normal_distribution<float> nd;
  std::vector<float> act(static_cast<size_t>(rows) * stride);
  for (auto& x : act) x = nd(rng);
  // Rows 0..15 fill block 4; rows 16..19 start block 1 (a scattered table).
  std::vector<int64_t> slots(rows);
  for (int32_t r = 0; r < rows; ++r) slots[r] = r < 16 ? 4 * 16 + r : 1 * 16 + (r - 16);
  const size_t pool_bytes = static_cast<size_t>(n_blocks * g.block_elems()) * elem;
  cuda::DeviceBuffer pool(pool_bytes, "pool");
  cuda::check(cudaMemset(pool.as(), 0, pool_bytes), "memset");
  auto dact = to_device(act), dslots = to_device(slots);
  const float* k = dact.as<float>() + g.kv_dim;  // k and v inside a fused row, as the backend stores them
  cuda::kv_store(g, type, pool.as(), layer, k, k + g.kv_dim, stride, dslots.as<int64_t>(), rows, nullptr);
  const auto bytes = to_host<unsigned char>(pool, pool_bytes);

  std::vector<unsigned char> want(pool_bytes, 0);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t kv = 0; kv < 2; ++kv)
      for (int32_t i = 0; i < g.kv_dim; ++i) {
        const float x = act[static_cast<size_t>(r) * stride + (1 + kv) * g.kv_dim + i];
        const auto b = static_cast<int32_t>(slots[r] / 16), s = static_cast<int32_t>(slots[r] % 16);
        unsigned char* at = want.data() + static_cast<size_t>(g.offset(b, layer, kv, s) + i) * elem;
        if (type == KvType::kF32) std::memcpy(at, &x, 4);
        const uint16_t h = type == KvType::kF16 ? f32_to_f16(x) : f32_to_bf16(x);
        if (type != KvType::kF32) std::memcpy(at, &h, 2);
      }
  ASSERT_EQ(bytes.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(bytes[i], want[i]) << "pool byte " << i;
}

INSTANTIATE_TEST_SUITE_P(Types, CudaKvStore, ::testing::Values(KvType::kF32, KvType::kF16, KvType::kBF16),
                         [](const auto& param_info) { return std::string(kv_type_name(param_info.param)); });

}  // namespace
}  // namespace kvgate
