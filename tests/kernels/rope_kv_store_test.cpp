// RoPE fused with the K/V store against the CPU: q rotated in place as
// engine/cpu/rowwise.h's RopeTable rotates it, adjacent pairs or halves
// (neox); k rotated the same way and v
// as it is, each landing in its token's slot of its block, rounded to the
// pool's element type as the host's f32_to_f16 / f32_to_bf16 round; nothing
// else written, and a negative slot (a padding row) storing nothing.
#include <cstring>
#include <random>

#include "engine/cpu/rowwise.h"
#include "engine/model/float_convert.h"
#include "engine/rope_angles.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/rope_kv_store.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

struct Case {
  int32_t heads, kv_heads, head_dim, rope_dim;
  KvType type;
  RopeStyle style = RopeStyle::kAdjacent;
};

class CudaRopeStoreKv : public CudaTest, public ::testing::WithParamInterface<Case> {};

float stored(const unsigned char* at, KvType type) {
  if (type == KvType::kF32) {
    float x;
    std::memcpy(&x, at, 4);
    return x;
  }
  uint16_t h;
  std::memcpy(&h, at, 2);
  return type == KvType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
}

TEST_P(CudaRopeStoreKv, RotatesQInPlaceAndStoresRotatedKAndV) {
  const Case c = GetParam();
  const int32_t qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim, stride = qd + 2 * kvd + 5;  // a wider row
  const cuda::KvPoolGeometry g{3, 16, kvd};
  const int32_t n_blocks = 6, layer = 1, ctx = 4096;
  const size_t elem = static_cast<size_t>(kv_type_bytes(c.type));
  // Rows 0..15 fill block 4 at positions 0..15; rows 16..19 start block 1
  // at positions 17, 1000, 4095, 33 (a scattered table); row 20 is padding.
  const int32_t rows = 21;
  std::vector<int32_t> pos(rows);
  std::vector<int64_t> slots(rows);
  const int32_t late[] = {17, 1000, 4095, 33};
  for (int32_t r = 0; r < rows; ++r) {
    pos[r] = r < 16 ? r : r < 20 ? late[r - 16] : 7;
    slots[r] = r < 16 ? 4 * 16 + r : r < 20 ? 1 * 16 + (r - 16) : -1;
  }
  std::mt19937 rng(9);
  std::normal_distribution<float> nd;
  std::vector<float> act(static_cast<size_t>(rows) * stride);
  for (auto& x : act) x = nd(rng);

  const size_t pool_bytes = static_cast<size_t>(n_blocks * g.block_elems()) * elem;
  cuda::DeviceBuffer pool(pool_bytes, "pool");
  cuda::check(cudaMemset(pool.as(), 0, pool_bytes), "memset");
  ModelConfig mc;
  mc.rope_dim = c.rope_dim;
  mc.rope_base = 10000.0f;
  mc.context_length = ctx;
  mc.rope_style = c.style;
  const RopeAngles table = rope_angles(mc, ctx);
  auto dact = to_device(act), dpos = to_device(pos), dslots = to_device(slots);
  auto dcos = to_device(table.cos), dsin = to_device(table.sin);
  cuda::rope_store_kv({dact.as<float>(), stride, c.heads, c.head_dim}, dpos.as<int32_t>(), dslots.as<int64_t>(), rows,
                      {dcos.as<float>(), dsin.as<float>(), table.half, c.style == RopeStyle::kHalves}, g, c.type, pool.as(), layer, nullptr);
  const auto got_act = to_host<float>(dact, act.size());
  const auto bytes = to_host<unsigned char>(pool, pool_bytes);

  // The CPU: q and k rotated, v untouched.
  const RopeTable cpu(mc);
  std::vector<float> want_act = act;
  for (int32_t r = 0; r < rows; ++r) {
    float* row = &want_act[static_cast<size_t>(r) * stride];
    cpu.apply(row, pos[r], c.heads, c.head_dim);
    cpu.apply(row + qd, pos[r], c.kv_heads, c.head_dim);
  }
  const double tol = c.type == KvType::kF32 ? kF32Rel : c.type == KvType::kF16 ? kF16Rel : kBF16Rel;
  std::vector<bool> written(pool_bytes / elem, false);
  for (int32_t r = 0; r < rows; ++r) {
    const std::string what = "row " + std::to_string(r) + " at position " + std::to_string(pos[r]);
    const size_t at = static_cast<size_t>(r) * stride;
    // q rotated in place; k and v left as they were in the activations.
    expect_rel_close(std::span(got_act).subspan(at, qd), std::span(want_act).subspan(at, qd), kF32Rel, "q of " + what);
    for (int32_t i = qd; i < stride; ++i) ASSERT_EQ(got_act[at + i], act[at + i]) << "k/v activations of " << what;
    if (slots[r] < 0) continue;
    const auto b = static_cast<int32_t>(slots[r] / 16), s = static_cast<int32_t>(slots[r] % 16);
    std::vector<float> k_got(kvd);
    for (int32_t i = 0; i < kvd; ++i) {
      const size_t ke = static_cast<size_t>(g.offset(b, layer, 0, s) + i), ve = static_cast<size_t>(g.offset(b, layer, 1, s) + i);
      written[ke] = written[ve] = true;
      k_got[i] = stored(bytes.data() + ke * elem, c.type);
      // v is stored as it is: exactly the host's rounding of it.
      const float v = act[at + qd + kvd + i];
      const float v_want = c.type == KvType::kF32   ? v
                           : c.type == KvType::kF16 ? f16_to_f32(f32_to_f16(v))
                                                    : bf16_to_f32(f32_to_bf16(v));
      ASSERT_EQ(stored(bytes.data() + ve * elem, c.type), v_want) << "v[" << i << "] of " << what;
    }
    expect_rel_close(k_got, std::span(want_act).subspan(at + qd, kvd), tol, "k of " + what);
  }
  for (size_t e = 0; e < written.size(); ++e) {
    if (written[e]) continue;
    ASSERT_EQ(stored(bytes.data() + e * elem, c.type), 0.0f) << "pool element " << e << " written";
  }
}

// head_dim 8 (stories260K), 64 and 128; rope_dim below head_dim once; each
// element type; the halves pairing (qwen2, qwen3, gemma, phi3) likewise,
// with Q wider than K (qwen3's 16 heads of 128 over 8).
constexpr RopeStyle kNeox = RopeStyle::kHalves;
INSTANTIATE_TEST_SUITE_P(Cases, CudaRopeStoreKv,
                         ::testing::Values(Case{8, 4, 8, 8, KvType::kF32}, Case{4, 2, 64, 64, KvType::kF32},
                                           Case{8, 8, 128, 64, KvType::kF32}, Case{4, 2, 64, 64, KvType::kF16},
                                           Case{32, 8, 128, 128, KvType::kBF16},
                                           Case{8, 4, 8, 8, KvType::kF32, kNeox}, Case{4, 2, 64, 64, KvType::kF32, kNeox},
                                           Case{8, 8, 128, 64, KvType::kF32, kNeox},
                                           Case{4, 2, 64, 32, KvType::kF16, kNeox},
                                           Case{16, 8, 128, 128, KvType::kBF16, kNeox}),
                         [](const auto& param_info) {
                           const Case& c = param_info.param;
                           return std::to_string(c.heads) + "h" + std::to_string(c.kv_heads) + "kv" +
                                  std::to_string(c.head_dim) + "d_rope" + std::to_string(c.rope_dim) + "_" +
                                  std::string(kv_type_name(c.type)) +
                                  (c.style == RopeStyle::kHalves ? "_neox" : "");
                         });

}  // namespace
}  // namespace kvgate
