// Paged decode attention and tiled prefill attention on the device against
// the CPU's attend / gather_kv + attend_rows (engine/cpu/attention.h), over
// batches that mix decoding sequences of different lengths with prefill
// chunks after a cached prefix, through scattered block tables and the real
// step plan. The CPU pool holds the same values the device pool does
// (rounded to f16 / bf16 and widened back for those types), so every element
// type is held to the f32 tolerance, what is tested being the kernels'
// arithmetic; except prefill rows on the tensor cores, which round Q and P
// (prefill_attention_test.cpp tests that kernel at length).
//
// The decode kernel splits each context into S parts chosen from the batch
// size (paged_decode_splits): the shapes cover GQA groups 1 to 16, and the
// batches both sides of the split rule: a few queries with contexts of
// thousands of positions (many parts, each many tiles long; short contexts
// whose later parts are empty), one query alone (the most parts), and 300
// queries (one part, no merge). Every launch gets a workspace of exactly
// paged_decode_workspace_bytes, followed by a guard that must stay untouched.
#include <cstring>
#include <numeric>
#include <random>

#include "engine/cpu/attention.h"
#include "engine/cpu/kv_pool.h"
#include "base/error.h"
#include "engine/model/float_convert.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/paged_attention.h"
#include "kernels/prefill_attention.h"
#include "kernels/step_plan.h"
#include "tests/kernels/attention_pools.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

using Shape = AttentionTestShape;

// A sequence of the batch: n new tokens at positions [start, start + n);
// n = 1 decodes, more prefill.
struct Seq {
  int32_t start, n;
};

// What a layer may add to the plain shape (gemma, phi3): its own query
// scale (0: 1 / sqrt(head_dim)), soft-capping of the scores, a window.
struct Scores {
  float scale = 0, softcap = 0;
  int32_t window = 0;
};

cuda::AttentionShape device_shape(const Shape& sh, const Scores& x = {}) {
  return {sh.heads, sh.kv_heads, sh.head_dim,
          x.scale > 0 ? x.scale : 1.0f / std::sqrt(static_cast<float>(sh.head_dim)), x.softcap, x.window};
}

class CudaAttention : public CudaTest, public ::testing::WithParamInterface<Shape> {
 protected:
  // Fills a pool of n_blocks blocks, runs both attention kernels over `seqs`
  // (tables drawn from the shuffled blocks, overlapping between sequences as
  // prefix-cached ones do) and compares every row with the CPU.
  void check_batch(const std::vector<Seq>& seqs, int32_t n_blocks, uint32_t seed, const Scores& extra = {}) {
    const Shape sh = GetParam();
    const int32_t B = 16, layers = 2, layer = 1, kvd = sh.kv_heads * sh.head_dim;
    const int32_t qd = sh.heads * sh.head_dim, G = sh.heads / sh.kv_heads;
    const cuda::KvPoolGeometry g{layers, B, kvd};

    std::mt19937 rng(seed);
    FilledPools pools = random_pools(sh, g, n_blocks, rng);
    const KvPool& cpu = pools.cpu;
    std::normal_distribution<float> nd;

    std::vector<BlockId> ids(n_blocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<std::vector<BlockId>> tables;
    std::vector<Tokens> tokens;
    size_t next = 0;
    for (const Seq& s : seqs) {
      const int32_t need = (s.start + s.n + B - 1) / B;
      ASSERT_LE(need, n_blocks);
      std::vector<BlockId> table;
      for (int32_t b = 0; b < need; ++b) table.push_back(ids[(next + b) % ids.size()]);
      tables.push_back(std::move(table));
      next = (next + need / 2 + 1) % ids.size();  // the next sequence shares half of this one's blocks
      tokens.emplace_back(s.n, 0);
    }
    std::vector<SequenceStep> batch;
    for (size_t i = 0; i < seqs.size(); ++i)
      batch.push_back({tokens[i], seqs[i].start, tables[i], LogitsWanted::kNone});
    ModelConfig c;
    c.context_length = 4096, c.vocab_size = 1;
    cuda::StepPlan plan;
    plan.build(batch, c, B, n_blocks);
    const int64_t T = plan.rows();
    const auto n_decode = static_cast<int32_t>(plan.decode.size());

    std::vector<float> q(static_cast<size_t>(T) * qd);
    for (auto& x : q) x = nd(rng);
    auto dpool = to_device(pools.device), dq = to_device(q);
    cuda::DeviceBuffer dout(q.size() * sizeof(float), "out");
    cuda::StepUploader up;
    const cuda::DeviceStep step = up.upload(plan, nullptr);
    const cuda::AttentionShape shape = device_shape(sh, extra);
    const AttentionShape cpu_shape{sh.head_dim, G, extra.scale, extra.softcap, extra.window};

    // Exactly the bytes asked for, then a guard the kernels must not write.
    const int32_t splits = cuda::paged_decode_splits(shape, n_decode);
    const size_t ws_bytes = cuda::paged_decode_workspace_bytes(shape, n_decode);
    constexpr size_t kGuard = 4096;
    constexpr int kGuardByte = 0x5a;
    cuda::DeviceBuffer ws(ws_bytes + kGuard, "workspace");
    cuda::check(cudaMemset(ws.as(), kGuardByte, ws.bytes()), "workspace guard");
    void* const workspace = ws_bytes > 0 ? ws.as() : nullptr;

    cuda::paged_decode_attention(g, sh.type, dpool.as(), layer, shape, dq.as<float>(), qd, dout.as<float>(), qd,
                                 step.decode, n_decode, step.tables, workspace, nullptr);
    cuda::prefill_attention(g, sh.type, dpool.as(), layer, shape, dq.as<float>(), qd, dout.as<float>(), qd,
                            step.prefill, static_cast<int32_t>(plan.prefill.size()), step.tables, nullptr);
    const auto got = to_host<float>(dout, q.size());
    const auto guard = to_host<unsigned char>(ws, ws.bytes());
    for (size_t i = ws_bytes; i < guard.size(); ++i)
      ASSERT_EQ(guard[i], kGuardByte) << "byte " << i - ws_bytes << " past the workspace of " << ws_bytes
                                      << " bytes was written (" << splits << " splits)";

    std::vector<float> want(q.size());
    int64_t row = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const Seq& s = seqs[i];
      for (int32_t kvh = 0; kvh < sh.kv_heads; ++kvh) {
        const int64_t off = row * qd + static_cast<int64_t>(kvh) * G * sh.head_dim;
        if (s.n == 1) {
          std::vector<float> scores;
          attend(cpu, layer, tables[i], s.start + 1, kvh, cpu_shape, &q[off], &want[off], scores);
        } else {
          GatheredKv gathered;
          gather_kv(cpu, layer, tables[i], s.start + s.n, kvh, sh.head_dim, gathered);
          AttendRowsScratch scratch;
          attend_rows(gathered, s.start, s.n, cpu_shape, &q[off], &want[off], qd, scratch);
        }
      }
      // Prefill rows of f16 / bf16 K/V with head_dim a multiple of 16 run on
      // the tensor cores, which round Q and P (cuda_test_support.h).
      const bool tensor_cores = s.n > 1 && sh.type != KvType::kF32 && sh.head_dim % 16 == 0;
      const double tol = !tensor_cores ? kF32Rel : sh.type == KvType::kF16 ? kAttentionF16Rel : kAttentionBF16Rel;
      for (int32_t r = 0; r < s.n; ++r)
        expect_rel_close(std::span(got).subspan((row + r) * qd, qd), std::span(want).subspan((row + r) * qd, qd),
                         tol,
                         "sequence " + std::to_string(i) + " (context " + std::to_string(s.start + s.n) + ") row " +
                             std::to_string(r) + ", " + std::to_string(n_decode) + " decodes in " +
                             std::to_string(splits) + " splits");
      row += s.n;
    }
  }
};

// Decodes at contexts 1, 5, 16, 17, 300, 1000 and 2500 (a few queries: many
// splits, the long ones many tiles per split, the short ones with empty
// splits); prefills of 1 + 15 rows, and of 37 rows after a 40-token cached
// prefix (three tiles, one partial).
TEST_P(CudaAttention, MixedBatchMatchesTheCpu) {
  check_batch({{0, 1}, {4, 1}, {15, 1}, {16, 1}, {299, 1}, {999, 1}, {2499, 1}, {0, 16}, {40, 37}}, 192, 21);
}

// One query alone gets the most splits: a long context, and a context of 3
// whose later splits are all empty.
TEST_P(CudaAttention, OneQueryMatchesTheCpu) {
  check_batch({{2999, 1}}, 192, 22);
  check_batch({{2, 1}}, 16, 23);
}

// 300 queries fill the device without splitting: one part each, written
// directly, no workspace.
TEST_P(CudaAttention, ManyDecodesMatchTheCpu) {
  std::mt19937 rng(24);
  std::uniform_int_distribution<int32_t> ctx(1, 200);
  std::vector<Seq> seqs;
  for (int i = 0; i < 300; ++i) seqs.push_back({ctx(rng) - 1, 1});
  check_batch(seqs, 64, 25);
}

// A gemma 2 layer: its own query scale, scores soft-capped at 2 (tight
// enough that the cap changes every weight; gemma's 50 would barely touch
// these unit-sized scores) and a window of 37, over the mixed batch: decodes
// whose windows start mid-part and mid-tile, one before the window bites
// (contexts 1, 5, 16, 17), and prefills whose windows start mid-tile and,
// after the cached prefix, before the chunk. Then the window alone (gemma
// 3, phi3: no cap) with one long query split into many parts, most of them
// empty, and a window of 100 over 300 short decodes.
TEST_P(CudaAttention, SoftCapAndSlidingWindowMatchTheCpu) {
  const std::vector<Seq> mixed{{0, 1}, {4, 1}, {15, 1}, {16, 1}, {299, 1}, {999, 1}, {2499, 1}, {0, 16}, {40, 37}};
  check_batch(mixed, 192, 31, {0.0625f, 2.0f, 37});
  check_batch(mixed, 192, 32, {0, 0, 64});
  check_batch({{2999, 1}}, 192, 33, {0, 0, 100});
  std::mt19937 rng(34);
  std::uniform_int_distribution<int32_t> ctx(1, 200);
  std::vector<Seq> seqs;
  for (int i = 0; i < 300; ++i) seqs.push_back({ctx(rng) - 1, 1});
  check_batch(seqs, 64, 35, {0, 50.0f, 100});
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaAttention,
                         ::testing::Values(Shape{8, 4, 8, KvType::kF32},      // stories260K
                                           Shape{8, 8, 64, KvType::kF32},     // no GQA: a group of 1
                                           Shape{4, 2, 64, KvType::kF32},     // GQA 2
                                           Shape{8, 2, 128, KvType::kF32},    // GQA 4, Llama's head_dim
                                           Shape{2, 1, 256, KvType::kF32},    // the largest head_dim
                                           Shape{4, 2, 64, KvType::kF16},     //
                                           Shape{16, 2, 64, KvType::kF16},    // GQA 8
                                           Shape{12, 4, 20, KvType::kF16},    // GQA 3; rows not whole 16-byte chunks
                                           Shape{8, 2, 128, KvType::kBF16},   //
                                           Shape{32, 8, 128, KvType::kBF16},  // Llama-3-8B
                                           Shape{32, 2, 96, KvType::kBF16}),  // GQA 16, the largest group
                         [](const auto& param_info) {
                           const Shape& s = param_info.param;
                           return std::to_string(s.heads) + "h" + std::to_string(s.kv_heads) + "kv" +
                                  std::to_string(s.head_dim) + "d_" + std::string(kv_type_name(s.type));
                         });

// The split rule of paged_attention.h, pinned: S depends on the batch size
// alone, workspace exactly when S > 1.
class CudaDecodeSplits : public CudaTest {};

TEST_F(CudaDecodeSplits, FollowTheBatchSize) {
  int device = 0, sms = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
  for (const Shape sh : {Shape{32, 8, 128, KvType::kBF16}, Shape{2, 1, 256, KvType::kF32}}) {
    const cuda::AttentionShape shape = device_shape(sh);
    EXPECT_EQ(cuda::paged_decode_workspace_bytes(shape, 0), 0u);
    for (const int32_t n : {1, 2, 5, 16, 33, 150, 300, 4096}) {
      const int32_t splits = cuda::paged_decode_splits(shape, n);
      const int64_t blocks = int64_t{n} * sh.kv_heads, wanted = 2 * int64_t{sms};
      const int64_t expected =
          blocks >= wanted ? 1 : std::min<int64_t>(cuda::kMaxDecodeSplits, (wanted + blocks - 1) / blocks);
      EXPECT_EQ(splits, expected) << n << " queries, " << sh.kv_heads << " KV heads, " << sms << " SMs";
      EXPECT_EQ(cuda::paged_decode_workspace_bytes(shape, n) == 0, splits == 1) << n << " queries";
    }
  }
}

// Shapes the kernel cannot run are refused on the host, before anything
// touches the device (so this runs without one).
TEST(DecodeAttentionLimits, RefusesShapesItCannotRun) {
  const cuda::KvPoolGeometry g{1, 16, 64};
  const auto launch = [&](cuda::AttentionShape shape) {
    cuda::paged_decode_attention(g, KvType::kF32, nullptr, 0, shape, nullptr, 0, nullptr, 0, nullptr, 1, nullptr,
                                 nullptr, nullptr);
  };
  EXPECT_THROW(launch({32, 1, 64, 0.125f}), Error);   // a group of 32
  EXPECT_THROW(launch({4, 4, 512, 0.044f}), Error);   // head_dim above kMaxHeadDim
  EXPECT_THROW(launch({6, 4, 64, 0.125f}), Error);    // heads that do not group
}

}  // namespace
}  // namespace kvgate
