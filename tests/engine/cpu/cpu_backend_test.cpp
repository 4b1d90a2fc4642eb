#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/attention.h"
#include "engine/cpu/matmul.h"
#include "engine/kv_layout.h"
#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/model.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

std::shared_ptr<const Model> stories() {
  static auto m = Model::load(shared_path("models/stories260K.gguf"));
  return m;
}

Tokens golden_ids() {
  std::ifstream f(shared_path("models/stories260K.greedy200.ids.txt"));
  Tokens ids;
  for (TokenId id; f >> id;) ids.push_back(id);
  return ids;
}

TokenId argmax(std::span<const float> v) {
  return static_cast<TokenId>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<BlockId> identity_table(int32_t n) {
  std::vector<BlockId> t(n);
  std::iota(t.begin(), t.end(), 0);
  return t;
}

// Runs tokens one per step and returns each step's logits.
std::vector<std::vector<float>> one_at_a_time(Backend& be, const Tokens& toks, std::span<const BlockId> table) {
  std::vector<std::vector<float>> rows;
  Logits out;
  for (size_t i = 0; i < toks.size(); ++i) {
    SequenceStep st{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), table, LogitsWanted::kLast};
    be.forward({&st, 1}, out);
    rows.emplace_back(out.row(0).begin(), out.row(0).end());
  }
  return rows;
}

TEST(CpuBackend, Stories260KGreedyMatchesPublishedIds) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(be->num_blocks());
  Tokens expected = golden_ids();
  ASSERT_EQ(expected.size(), 200u);
  Tokens seq{1};  // BOS
  Logits out;
  for (int step = 0; step < 200; ++step) {
    SequenceStep st{std::span(seq).subspan(seq.size() - 1, 1), static_cast<int32_t>(seq.size() - 1), table,
                    LogitsWanted::kLast};
    be->forward({&st, 1}, out);
    seq.push_back(argmax(out.row(0)));
  }
  EXPECT_EQ(Tokens(seq.begin() + 1, seq.end()), expected);
}

TEST(CpuBackend, PrefillThenDecodeEqualsOneTokenAtATime) {
  auto model = stories();
  Tokens toks = golden_ids();
  toks.insert(toks.begin(), 1);
  toks.resize(200);
  auto a = make_cpu_backend(model, {});
  auto b = make_cpu_backend(model, {});
  auto table = identity_table(a->num_blocks());
  auto ref = one_at_a_time(*a, toks, table);

  // A prefill that crosses block boundaries at 16 and 32; then one after a
  // cached prefix (as a prefix-cache hit runs), three chunks of attention
  // over one gathered K/V, the last one short; then a run of 14, shorter
  // than a block but long enough for attend_rows (attend_rows_min is 12 for
  // this model's head_dim of 8); then decode.
  const size_t first = 45, second = 180, third = 194;
  Logits out;
  size_t pos = 0;
  for (size_t end : {first, second, third}) {
    SequenceStep pre{std::span(toks).subspan(pos, end - pos), static_cast<int32_t>(pos), table, LogitsWanted::kAll};
    b->forward({&pre, 1}, out);
    for (size_t i = pos; i < end; ++i)
      for (int v = 0; v < out.vocab(); ++v)
        ASSERT_NEAR(out.row(0, static_cast<int32_t>(i - pos))[v], ref[i][v], 1e-4) << i;
    pos = end;
  }
  for (size_t i = third; i < toks.size(); ++i) {
    SequenceStep st{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), table, LogitsWanted::kLast};
    b->forward({&st, 1}, out);
    for (int v = 0; v < out.vocab(); ++v) ASSERT_NEAR(out.row(0)[v], ref[i][v], 1e-4) << i;
  }
}

// A step whose rows do not all want logits runs the last layer for the
// rows that do (and K/V for every row). Three sequences step together, as
// the scheduler batches them: a prompt wanting its last row, a prompt chunk
// wanting none, a one-token prompt; then the rest of each; then a decode
// step of all three, which reads the K/V the first two steps stored in the
// last layer. A second backend runs the same steps wanting every row's
// logits, so every layer runs every row: the wanted rows must agree.
TEST(CpuBackend, LastLayerForLogitRowsEqualsEveryRow) {
  auto model = stories();
  Tokens toks = golden_ids();
  toks.insert(toks.begin(), 1);
  auto some = make_cpu_backend(model, {});
  auto every = make_cpu_backend(model, {});
  const int32_t per_seq = 8, B = some->block_size();
  ASSERT_GE(some->num_blocks(), 3 * per_seq);
  ASSERT_GE(per_seq * B, 128);
  std::vector<std::vector<BlockId>> tables(3);
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < per_seq; ++i) tables[s].push_back(s * per_seq + i);
  // Each sequence's prompt, and where each step ends in it (a step runs
  // from where the previous one ended, at that position).
  const Tokens seqs[3] = {Tokens(toks.begin(), toks.begin() + 47), Tokens(toks.begin() + 60, toks.begin() + 111),
                          Tokens(toks.begin() + 150, toks.begin() + 153)};
  const int32_t ends[3][3] = {{45, 46, 47}, {30, 50, 51}, {1, 2, 3}};
  const LogitsWanted wanted[3][3] = {{LogitsWanted::kLast, LogitsWanted::kLast, LogitsWanted::kLast},
                                     {LogitsWanted::kNone, LogitsWanted::kLast, LogitsWanted::kLast},
                                     {LogitsWanted::kLast, LogitsWanted::kLast, LogitsWanted::kLast}};
  int32_t start[3] = {0, 0, 0};
  Logits a, b;
  for (int step = 0; step < 3; ++step) {
    std::vector<SequenceStep> mine, all;
    for (int s = 0; s < 3; ++s) {
      const auto run = std::span(seqs[s]).subspan(start[s], ends[s][step] - start[s]);
      mine.push_back({run, start[s], tables[s], wanted[s][step]});
      all.push_back({run, start[s], tables[s], LogitsWanted::kAll});
    }
    some->forward(mine, b);
    every->forward(all, a);
    for (int s = 0; s < 3; ++s) {
      SCOPED_TRACE(::testing::Message() << "step " << step << " sequence " << s);
      if (wanted[s][step] == LogitsWanted::kNone) {
        EXPECT_EQ(b.rows(s), 0);
      } else {
        ASSERT_EQ(b.rows(s), 1);
        const auto got = b.row(s), ref = a.row(s, a.rows(s) - 1);
        for (int v = 0; v < b.vocab(); ++v) ASSERT_NEAR(got[v], ref[v], 1e-4) << "vocab " << v;
      }
      start[s] = ends[s][step];
    }
  }
}

TEST(CpuBackend, ScatteredBlockTableEqualsContiguousOne) {
  auto model = stories();
  Tokens toks = golden_ids();
  toks.resize(70);
  auto a = make_cpu_backend(model, {});
  auto b = make_cpu_backend(model, {});
  auto contiguous = identity_table(a->num_blocks());
  std::vector<BlockId> scattered = contiguous;
  std::mt19937 rng(7);
  std::shuffle(scattered.begin(), scattered.end(), rng);
  Logits la, lb;
  SequenceStep sa{toks, 0, contiguous, LogitsWanted::kAll};
  SequenceStep sb{toks, 0, scattered, LogitsWanted::kAll};
  a->forward({&sa, 1}, la);
  b->forward({&sb, 1}, lb);
  for (int32_t i = 0; i < la.rows(0); ++i)
    for (int v = 0; v < la.vocab(); ++v) ASSERT_EQ(la.row(0, i)[v], lb.row(0, i)[v]);
}

// What a pool of type t holds for x: the scalar conversions of
// float_convert.h (the pool's own are vectorized), so the attention tests'
// references see the values attention reads.
float as_stored(float x, KvType t) {
  switch (t) {
    case KvType::kF32: return x;
    case KvType::kF16: return f16_to_f32(f32_to_f16(x));
    case KvType::kBF16: return bf16_to_f32(f32_to_bf16(x));
  }
  return std::nanf("");
}

// Writes K/V rows (kv_dim floats per position) into the pool through the
// block table, and rounds the caller's copies to what the pool then holds.
void fill_pool(KvPool& pool, int32_t layer, std::span<const BlockId> table, std::vector<float>& K,
               std::vector<float>& V) {
  const int32_t kvd = pool.kv_dim(), B = pool.block_size();
  const auto n_ctx = static_cast<int32_t>(K.size() / static_cast<size_t>(kvd));
  for (int32_t p = 0; p < n_ctx; ++p)
    pool.store(layer, table[p / B], p % B, &K[static_cast<size_t>(p) * kvd], &V[static_cast<size_t>(p) * kvd]);
  for (auto& x : K) x = as_stored(x, pool.type());
  for (auto& x : V) x = as_stored(x, pool.type());
}

std::string type_name(const ::testing::TestParamInfo<KvType>& info) { return std::string(kv_type_name(info.param)); }

class CpuAttention : public ::testing::TestWithParam<KvType> {};
INSTANTIATE_TEST_SUITE_P(KvTypes, CpuAttention, ::testing::Values(KvType::kF32, KvType::kF16, KvType::kBF16),
                         type_name);

// head_dim 8 is stories260K's (whole AVX2 registers); 12 leaves a tail of 4
// values that take the scalar path; 64 is the 110M model's (one slice of the
// output accumulated in registers); 136 is two full slices and one of 8.
using DecodeCase = std::tuple<KvType, int32_t>;
std::string decode_case_name(const ::testing::TestParamInfo<DecodeCase>& info) {
  const auto [type, hd] = info.param;
  return std::string(kv_type_name(type)).append("_hd").append(std::to_string(hd));
}
class CpuAttentionDecode : public ::testing::TestWithParam<DecodeCase> {};
INSTANTIATE_TEST_SUITE_P(KvTypes, CpuAttentionDecode,
                         ::testing::Combine(::testing::Values(KvType::kF32, KvType::kF16, KvType::kBF16),
                                            ::testing::Values(8, 12, 64, 136)),
                         decode_case_name);

TEST_P(CpuAttentionDecode, PagedEqualsContiguousReference) {
  const auto [type, hd] = GetParam();
  const int32_t layers = 2, B = 4, kv_heads = 2, G = 3, n_ctx = 23;
  KvPool pool(type, layers, 16, B, kv_heads * hd);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<BlockId> table{9, 2, 14, 0, 7, 11};
  // Contiguous copies of what goes into the paged pool.
  std::vector<float> K(static_cast<size_t>(n_ctx * kv_heads * hd)), V(K.size());
  for (auto& x : K) x = nd(rng);
  for (auto& x : V) x = nd(rng);
  const int32_t layer = 1;
  fill_pool(pool, layer, table, K, V);
  std::vector<float> q(static_cast<size_t>(G * hd));
  for (auto& x : q) x = nd(rng);
  for (int32_t g = 0; g < kv_heads; ++g) {
    std::vector<float> out(static_cast<size_t>(G * hd)), scores;
    attend(pool, layer, table, n_ctx, g, {hd, G}, q.data(), out.data(), scores);
    for (int32_t h = 0; h < G; ++h) {
      // Straightforward softmax(q.k / sqrt(d)) v in double precision.
      std::vector<double> s(n_ctx);
      for (int32_t p = 0; p < n_ctx; ++p) {
        double dot = 0;
        for (int32_t i = 0; i < hd; ++i)
          dot += double{q[h * hd + i]} * K[static_cast<size_t>((p * kv_heads + g) * hd + i)];
        s[p] = dot / std::sqrt(static_cast<double>(hd));
      }
      double mx = *std::max_element(s.begin(), s.end()), sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - mx));
      for (int32_t i = 0; i < hd; ++i) {
        double o = 0;
        for (int32_t p = 0; p < n_ctx; ++p) o += s[p] / sum * V[static_cast<size_t>((p * kv_heads + g) * hd + i)];
        EXPECT_NEAR(out[h * hd + i], o, 1e-5);
      }
    }
  }
}

// gather_kv then attend_rows against a straightforward float64 causal
// attention over the same block table. Contract (attention.h): rows i < n
// are the tokens at positions start_pos + i; row i of q and out holds the
// group's G heads (head_dim each, contiguous), rows row_stride floats apart;
// the gathered K/V cover every position < start_pos + n (and may go on past
// it); row i attends to positions 0..start_pos + i. In the backend q and out point at a KV head's group
// inside a token's full row of query heads, so that is how it is called here,
// and no other head's columns may be written.
struct RowsCase {
  int32_t start_pos, n, group, block_size;
  // 64: the 110M model's, V in panels of 48 + 16; 32, 48, 80, 128: other
  // splits of a row into panels; 8: not whole vectors, sgemm.
  int32_t head_dim = 16;
};

// Tolerance: |q.k / sqrt(d)| is O(3) for N(0, 1) entries and each output is
// a convex combination of N(0, 1) values over at most 230 positions, summed
// in f32 by sgemm: the errors seen are below 1e-6 (the worst is printed).
// 1e-5, as in PagedEqualsContiguousReference, leaves an order of magnitude;
// leaving out a single position (a causal-mask or block-table slip) moves
// some output of every case here by 1e-2 or more.
constexpr double kRowsTolerance = 1e-5;

void check_attend_rows(KvType type, const RowsCase& c, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "start_pos " << c.start_pos << " n " << c.n << " group " << c.group
                                    << " block " << c.block_size << " head_dim " << c.head_dim);
  const int32_t layers = 2, kv_heads = 2, hd = c.head_dim, G = c.group, B = c.block_size, layer = 1;
  // Positions past the run (a later chunk's, in the backend) are in the pool
  // and gathered too; the run must not see them.
  const int32_t later = 5;
  const int32_t n_ctx = c.start_pos + c.n + later, n_heads = kv_heads * G, kvd = kv_heads * hd;
  const int32_t blocks = (n_ctx + B - 1) / B;
  KvPool pool(type, layers, blocks + 7, B, kvd);
  // A scattered table over a pool with spare blocks: the sequence's block i is
  // pool block table[i].
  std::vector<BlockId> table(static_cast<size_t>(blocks + 7));
  std::iota(table.begin(), table.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(table.begin(), table.end(), rng);
  table.resize(static_cast<size_t>(blocks));
  std::normal_distribution<float> nd;
  std::vector<float> K(static_cast<size_t>(n_ctx) * kvd), V(K.size());
  for (auto& x : K) x = nd(rng);
  for (auto& x : V) x = nd(rng);
  fill_pool(pool, layer, table, K, V);
  // Another layer's K/V in the same blocks must not be read.
  std::vector<float> other(K.size(), 1e3f), other_v = other;
  fill_pool(pool, 0, table, other, other_v);
  const int64_t stride = static_cast<int64_t>(n_heads) * hd;  // a token's row of all query heads
  std::vector<float> q(static_cast<size_t>(c.n * stride));
  for (auto& x : q) x = nd(rng);
  const double inv_sqrt = 1.0 / std::sqrt(static_cast<double>(hd));
  double worst = 0;
  for (int32_t g = 0; g < kv_heads; ++g) {
    std::vector<float> out(q.size(), std::nanf(""));
    GatheredKv gathered;
    gather_kv(pool, layer, table, n_ctx, g, hd, gathered);
    AttendRowsScratch scratch;
    const int64_t off = static_cast<int64_t>(g) * G * hd;
    attend_rows(gathered, c.start_pos, c.n, {hd, G}, q.data() + off, out.data() + off, stride, scratch);
    for (int32_t i = 0; i < c.n; ++i) {
      const int32_t seen = c.start_pos + i + 1;
      for (int32_t qh = 0; qh < n_heads; ++qh) {
        const float* o = &out[static_cast<size_t>(i * stride + qh * hd)];
        if (qh / G != g) {  // another KV head's group: untouched
          for (int32_t d = 0; d < hd; ++d) ASSERT_TRUE(std::isnan(o[d])) << "row " << i << " head " << qh;
          continue;
        }
        const float* qv = &q[static_cast<size_t>(i * stride + qh * hd)];
        std::vector<double> w(static_cast<size_t>(seen));
        for (int32_t p = 0; p < seen; ++p) {
          double dot = 0;
          for (int32_t d = 0; d < hd; ++d) dot += double{qv[d]} * K[static_cast<size_t>(p * kvd + g * hd + d)];
          w[p] = dot * inv_sqrt;
        }
        const double mx = *std::max_element(w.begin(), w.end());
        double sum = 0;
        for (auto& x : w) sum += (x = std::exp(x - mx));
        for (int32_t d = 0; d < hd; ++d) {
          double ref = 0;
          for (int32_t p = 0; p < seen; ++p) ref += w[p] / sum * V[static_cast<size_t>(p * kvd + g * hd + d)];
          worst = std::max(worst, std::abs(o[d] - ref));
          ASSERT_NEAR(o[d], ref, kRowsTolerance) << "row " << i << " (position " << c.start_pos + i << ") head " << qh
                                                 << " dim " << d;
        }
      }
    }
  }
  std::printf("[ attend_rows %s start %3d n %3d group %d B %2d head_dim %2d: max |diff| vs f64 %.2g ]\n",
              std::string(kv_type_name(type)).c_str(), c.start_pos, c.n, G, B, hd, worst);
}

TEST_P(CpuAttention, AttendRowsEqualsFloat64CausalReference) {
  // The backend hands attend_rows chunks of up to 64 queries (the last
  // chunk of a prompt may be shorter, down to 2); attend_rows itself takes
  // any n, so sizes around 64 and past it are checked too.
  const RowsCase cases[] = {
      {0, 2, 1, 16},     {0, 16, 1, 16},    {0, 63, 4, 16},  {0, 64, 4, 16},   {0, 65, 1, 16},
      {5, 16, 4, 16},    {5, 64, 1, 16},    {13, 70, 4, 16}, {37, 6, 2, 16},   {64, 64, 4, 16},
      {100, 130, 2, 16}, {3, 40, 3, 4},     {6, 64, 1, 4},   {1, 65, 4, 4},    {127, 17, 2, 32},
      {200, 64, 3, 16, 64}, {0, 50, 3, 16, 64}, {1, 65, 4, 4, 64}, {127, 17, 2, 32, 64}, {30, 20, 2, 16, 8},
      {40, 30, 2, 16, 32},  {10, 70, 3, 16, 48}, {90, 20, 4, 16, 80}, {17, 33, 1, 4, 128},
  };
  uint32_t seed = 11;
  for (const RowsCase& c : cases) {
    check_attend_rows(GetParam(), c, seed++);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// n_seqs sequences with distinct prompts (different offsets into the golden
// ids and different lengths) decode 12 steps together; after every batched
// step each sequence's same step runs alone (a batch of one) on a second
// backend, and its logits must match. Returns the largest difference seen.
float batched_vs_alone_max_diff(int n_seqs, float tol) {
  auto model = stories();
  Tokens base = golden_ids();
  const int32_t per_seq = 8;  // blocks per sequence: 128 positions
  BackendOptions opt;
  opt.kv_budget_bytes = kv_budget_for_blocks(model->config(), KvType::kF32, opt.block_size, n_seqs * per_seq);
  auto batched = make_cpu_backend(model, opt);
  auto alone = make_cpu_backend(model, opt);
  std::vector<std::vector<BlockId>> tables(n_seqs);
  std::vector<Tokens> prompts(n_seqs);
  Logits out;
  for (int s = 0; s < n_seqs; ++s) {
    for (int b = 0; b < per_seq; ++b) tables[s].push_back(s * per_seq + b);
    const size_t from = static_cast<size_t>(s * 7) % 120, len = 10 + static_cast<size_t>(3 * s) % 60;
    prompts[s] = Tokens(base.begin() + static_cast<ptrdiff_t>(from), base.begin() + static_cast<ptrdiff_t>(from + len));
    SequenceStep st{prompts[s], 0, tables[s], LogitsWanted::kLast};
    batched->forward({&st, 1}, out);
    alone->forward({&st, 1}, out);
  }
  float worst = 0;
  for (int step = 0; step < 12; ++step) {
    std::vector<SequenceStep> batch;
    std::vector<TokenId> next(n_seqs);
    for (int s = 0; s < n_seqs; ++s) {
      next[s] = base[(step * 13 + s * 5) % base.size()];
      batch.push_back({std::span(&next[s], 1), static_cast<int32_t>(prompts[s].size()), tables[s], LogitsWanted::kLast});
    }
    batched->forward(batch, out);
    EXPECT_EQ(out.total_rows(), n_seqs);
    for (int s = 0; s < n_seqs; ++s) {
      Logits one;
      alone->forward({&batch[s], 1}, one);
      for (int v = 0; v < one.vocab(); ++v) {
        const float diff = std::abs(out.row(s)[v] - one.row(0)[v]);
        worst = std::max(worst, diff);
        if (!(diff <= tol)) {  // also catches NaN
          ADD_FAILURE() << "seq " << s << " step " << step << " token " << v << ": batched " << out.row(s)[v]
                        << " vs alone " << one.row(0)[v];
          return worst;
        }
      }
      prompts[s].push_back(next[s]);
    }
  }
  return worst;
}

// Tolerances for batched vs alone logits. Both sides run the same f32
// arithmetic in a different order, and stories260K's logits reach |20|,
// where one f32 ulp is 2e-6; every decode step also writes K/V that differ
// by rounding, which later steps read. A wrong row, position or block table
// moves logits by O(1) (a position off by one: 1.3).
// - Few rows: the register tiles of a batch vs those of one row, summing in
//   another order (worst seen over 12 steps: 2e-5, 10 ulps at |16|).
constexpr float kStreamingTolerance = 1e-4f;
// - many_rows_min or more: the AVX-512 panels or OpenBLAS sgemm (whose
//   blocking and FMA order depend on the CPU's kernel) vs the tiles (worst
//   seen: 3.7e-5, 20 ulps at |18|). 2e-4 (1e-5 of the largest logit) leaves
//   room for other kernels.
constexpr float kSgemmTolerance = 2e-4f;

TEST(CpuBackend, BatchedDecodeEqualsEachAlone) {
  // 5 rows: both sides take the register tiles.
  ASSERT_LT(5, many_rows_min(TensorType::F32));
  const float worst = batched_vs_alone_max_diff(5, kStreamingTolerance);
  std::printf("[ batch of 5 vs alone: max |logit diff| %.3g ]\n", static_cast<double>(worst));
}

TEST(CpuBackend, BatchedDecodeThroughTheManyRowsPathEqualsEachAlone) {
  // Decoding rows past the crossover: the batched step's linear layers go to
  // the panels (or sgemm), while each sequence alone (one row) takes the tiles.
  const int rows = static_cast<int>(many_rows_min(TensorType::F32)) + 4;
  const float worst = batched_vs_alone_max_diff(rows, kSgemmTolerance);
  std::printf("[ batch of %d (many-rows path) vs alone: max |logit diff| %.3g ]\n", rows, static_cast<double>(worst));
}

TEST(CpuBackend, RejectsBadBatchesBeforeWriting) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(2);
  Tokens toks(40, 5);
  Logits out;
  SequenceStep too_short{toks, 0, table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&too_short, 1}, out), Error);
  Tokens bad{1, 99999};
  SequenceStep bad_token{bad, 0, table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&bad_token, 1}, out), Error);
  auto full = identity_table(be->num_blocks());
  Tokens one{1};
  SequenceStep past_ctx{one, be->config().context_length, full, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&past_ctx, 1}, out), Error);
}

TEST(CpuBackend, BlockCopiesRoundTrip) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(be->num_blocks());
  Tokens toks = golden_ids();
  toks.resize(16);
  Logits out;
  SequenceStep st{toks, 0, table, LogitsWanted::kLast};
  be->forward({&st, 1}, out);
  std::vector<std::byte> host(be->block_bytes());
  be->copy_block_to_host(0, host);
  be->copy_block_from_host(5, host);
  std::vector<std::byte> again(be->block_bytes());
  be->copy_block_to_host(5, again);
  EXPECT_EQ(host, again);
}

}  // namespace
}  // namespace kvgate
