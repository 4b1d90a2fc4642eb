// Paged decode attention and tiled prefill attention on the device against
// the CPU's attend / gather_kv + attend_rows (engine/cpu/attention.h), over one batch
// that mixes decoding sequences of different lengths with prefill chunks
// after a cached prefix, through scattered block tables and the real step
// plan. The CPU pool holds the same values the device pool does (rounded to
// f16 / bf16 and widened back for those types), so every element type is
// held to the f32 tolerance: what is tested is the kernels' arithmetic.
#include <cstring>
#include <numeric>
#include <random>

#include "engine/cpu/attention.h"
#include "engine/cpu/kv_pool.h"
#include "engine/model/float_convert.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/paged_attention.h"
#include "kernels/prefill_attention.h"
#include "kernels/step_plan.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

struct Shape {
  int32_t heads, kv_heads, head_dim;
  KvType type;
};

class CudaAttention : public CudaTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(CudaAttention, MixedBatchMatchesTheCpu) {
  const Shape sh = GetParam();
  const int32_t B = 16, layers = 2, layer = 1, n_blocks = 64, kvd = sh.kv_heads * sh.head_dim;
  const int32_t qd = sh.heads * sh.head_dim, G = sh.heads / sh.kv_heads;
  const cuda::KvPoolGeometry g{layers, B, kvd};
  const size_t elem = static_cast<size_t>(kv_type_bytes(sh.type));

  // Every slot of every block holds a value, so any table reads defined data.
  std::mt19937 rng(21);
  std::normal_distribution<float> nd;
  KvPool cpu(KvType::kF32, layers, n_blocks, B, kvd);
  std::vector<unsigned char> dev(static_cast<size_t>(n_blocks * g.block_elems()) * elem);
  for (int32_t l = 0; l < layers; ++l)
    for (int32_t b = 0; b < n_blocks; ++b)
      for (int32_t s = 0; s < B; ++s)
        for (int32_t kv = 0; kv < 2; ++kv)
          for (int32_t i = 0; i < kvd; ++i) {
            float x = nd(rng);
            unsigned char* at = dev.data() + static_cast<size_t>(g.offset(b, l, kv, s) + i) * elem;
            if (sh.type == KvType::kF32) {
              std::memcpy(at, &x, 4);
            } else {
              const uint16_t h = sh.type == KvType::kF16 ? f32_to_f16(x) : f32_to_bf16(x);
              std::memcpy(at, &h, 2);
              x = sh.type == KvType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
            }
            (kv == 0 ? cpu.k<float>(l, b, s) : cpu.v<float>(l, b, s))[i] = x;
          }

  // Decodes at contexts 1, 5, 16, 17 and 300; prefills of 1 + 15 rows, and
  // of 37 rows after a 40-token cached prefix (three tiles, one partial).
  std::vector<BlockId> ids(n_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  struct Seq {
    int32_t start, n;
  };
  const std::vector<Seq> seqs{{0, 1}, {4, 1}, {15, 1}, {16, 1}, {299, 1}, {0, 16}, {40, 37}};
  std::vector<std::vector<BlockId>> tables;
  std::vector<Tokens> tokens;
  size_t next = 0;
  for (const Seq& s : seqs) {
    const int32_t need = (s.start + s.n + B - 1) / B;
    tables.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(next), ids.begin() + static_cast<std::ptrdiff_t>(next + need));
    next = (next + need) % (n_blocks - 20);  // sequences share blocks too, as prefix-cached ones do
    tokens.emplace_back(s.n, 0);
  }
  std::vector<SequenceStep> batch;
  for (size_t i = 0; i < seqs.size(); ++i) batch.push_back({tokens[i], seqs[i].start, tables[i], LogitsWanted::kNone});
  ModelConfig c;
  c.context_length = 4096, c.vocab_size = 1;
  cuda::StepPlan plan;
  plan.build(batch, c, B, n_blocks);
  const int64_t T = plan.rows();

  std::vector<float> q(static_cast<size_t>(T) * qd);
  for (auto& x : q) x = nd(rng);
  auto dpool = to_device(dev), dq = to_device(q);
  cuda::DeviceBuffer dout(q.size() * sizeof(float), "out");
  cuda::StepUploader up;
  const cuda::DeviceStep step = up.upload(plan, nullptr);
  const cuda::AttentionShape shape{sh.heads, sh.kv_heads, sh.head_dim, 1.0f / std::sqrt(static_cast<float>(sh.head_dim))};
  cuda::paged_decode_attention(g, sh.type, dpool.as(), layer, shape, dq.as<float>(), qd, dout.as<float>(), qd,
                               step.decode, static_cast<int32_t>(plan.decode.size()), step.tables, nullptr);
  cuda::prefill_attention(g, sh.type, dpool.as(), layer, shape, dq.as<float>(), qd, dout.as<float>(), qd,
                          step.prefill, static_cast<int32_t>(plan.prefill.size()), step.tables, nullptr);
  const auto got = to_host<float>(dout, q.size());

  std::vector<float> want(q.size());
  int64_t row = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const Seq& s = seqs[i];
    for (int32_t kvh = 0; kvh < sh.kv_heads; ++kvh) {
      const int64_t off = row * qd + static_cast<int64_t>(kvh) * G * sh.head_dim;
      if (s.n == 1) {
        std::vector<float> scores;
        attend(cpu, layer, tables[i], s.start + 1, kvh, {sh.head_dim, G}, &q[off], &want[off], scores);
      } else {
        GatheredKv gathered;
        gather_kv(cpu, layer, tables[i], s.start + s.n, kvh, sh.head_dim, gathered);
        AttendRowsScratch scratch;
        attend_rows(gathered, s.start, s.n, {sh.head_dim, G}, &q[off], &want[off], qd, scratch);
      }
    }
    for (int32_t r = 0; r < s.n; ++r)
      expect_rel_close(std::span(got).subspan((row + r) * qd, qd), std::span(want).subspan((row + r) * qd, qd),
                       kF32Rel, "sequence " + std::to_string(i) + " row " + std::to_string(r));
    row += s.n;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaAttention,
                         ::testing::Values(Shape{8, 4, 8, KvType::kF32},     // stories260K
                                           Shape{4, 2, 64, KvType::kF32},    // GQA 2
                                           Shape{8, 2, 128, KvType::kF32},   // GQA 4, Llama's head_dim
                                           Shape{2, 1, 256, KvType::kF32},   // the largest head_dim
                                           Shape{4, 2, 64, KvType::kF16}, Shape{8, 2, 128, KvType::kBF16}),
                         [](const auto& param_info) {
                           const Shape& s = param_info.param;
                           return std::to_string(s.heads) + "h" + std::to_string(s.kv_heads) + "kv" +
                                  std::to_string(s.head_dim) + "d_" + std::string(kv_type_name(s.type));
                         });

}  // namespace
}  // namespace kvgate
