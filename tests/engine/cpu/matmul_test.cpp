// The linear-layer kernels against a double-precision reference, for every
// stored weight type: the register tiles of both builds (AVX2 and, where the
// CPU has it, AVX-512) at batch sizes on and off their tile edges, the int8
// Q8_0 path of batch 1, the AVX-512 panel kernel of many rows, and matmul
// itself across its crossover.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/gemm_panel.h"
#include "engine/cpu/gemm_tile.h"
#include "engine/cpu/matmul.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// A random matrix stored as `type`, with the f32 values it really holds.
struct StoredMatrix {
  std::vector<std::byte> bytes;
  std::vector<float> values;  // [rows][cols], dequantized
  Matrix m;
};

StoredMatrix make_matrix(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  StoredMatrix s;
  const auto traits = *tensor_type_traits(static_cast<uint32_t>(type));
  const auto row_bytes = static_cast<size_t>(cols / traits.block_elems * traits.block_bytes);
  s.bytes.resize(row_bytes * static_cast<size_t>(rows));
  s.values.resize(static_cast<size_t>(rows * cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    std::byte* dst = s.bytes.data() + r * row_bytes;
    quantize_row(type, row.data(), dst, cols);
    dequantize_row(type, dst, &s.values[r * cols], cols);
  }
  s.m = {type, rows, cols, row_bytes, s.bytes.data()};
  return s;
}

std::vector<float> make_activations(int64_t n, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * cols));
  for (float& v : x) v = dist(rng);
  return x;
}

// Checks y against the exact products of `w` and `x`, each entry within
// `rel` of the sum of |w_i x_i| (the scale its rounding error grows with).
void expect_products(const StoredMatrix& w, const std::vector<float>& x, int64_t n, const std::vector<float>& y,
                     int64_t r0, int64_t r1, double rel, const std::string& what) {
  const int64_t rows = w.m.rows, cols = w.m.cols;
  int bad = 0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t r = r0; r < r1; ++r) {
      double want = 0, scale = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double p = double{w.values[r * cols + c]} * x[t * cols + c];
        want += p;
        scale += std::fabs(p);
      }
      const double got = y[t * rows + r];
      if (std::fabs(got - want) > rel * scale && ++bad <= 3)
        ADD_FAILURE() << what << ": y[" << t << "][" << r << "] = " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0) << what;
}

constexpr TensorType kTypes[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q8_0,
                                  TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                  TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};
constexpr TensorType kBlockTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                      TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};
std::string name(TensorType t) { return std::string(ggml_type_name(static_cast<uint32_t>(t))); }
// Columns off the 16-column tile edge where the type allows (whole blocks otherwise).
int64_t odd_cols(TensorType t) {
  const int64_t block = tensor_type_traits(static_cast<uint32_t>(t))->block_elems;
  return block == 1 ? 200 : block == kQBlock ? 192 : 512;
}

struct Build {
  const char* name;
  decltype(&gemm_rows_avx2) gemm_rows;
};
std::vector<Build> builds() {
  std::vector<Build> b{{"avx2", gemm_rows_avx2}};
  if (cpu_has_avx512()) b.push_back({"avx512", gemm_rows_avx512});
  return b;
}

// Rows and columns off every tile edge (37 rows: tiles of 3 and 2 leave one
// over; 200 columns: not a multiple of 16 for the masked tail; Q8_0 rows are
// whole blocks of 32).
TEST(GemmTile, EveryTypeAndBatchMatchesTheReference) {
  for (const Build& b : builds())
    for (TensorType type : kTypes) {
      const int64_t rows = 37, cols = odd_cols(type);
      const StoredMatrix w = make_matrix(type, rows, cols, 7);
      for (int64_t n : {2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 24, 32, 33}) {
        const auto x = make_activations(n, cols, static_cast<uint32_t>(n));
        std::vector<float> y(static_cast<size_t>(n * rows), NAN);
        // Two ranges, as two work items of one matmul: each writes only its rows.
        b.gemm_rows(w.m, 0, 13, x.data(), n, y.data());
        b.gemm_rows(w.m, 13, rows, x.data(), n, y.data());
        expect_products(w, x, n, y, 0, rows, 1e-5, std::string(b.name) + " " + name(type) + " n=" + std::to_string(n));
      }
    }
}

// The AVX-512 tile widens the 32-value types in its loads: every product
// must be the one of the rows dequantized to f32 first (as the AVX2 build
// does), bit for bit: the same values, summed in the same order.
TEST(GemmTile, Avx512WidensThe32ValueTypesAsTheirRowsWidenedFirstBitForBit) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  for (TensorType type : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1}) {
    SCOPED_TRACE(name(type));
    const int64_t rows = 37, cols = 256;
    const StoredMatrix q = make_matrix(type, rows, cols, 21);
    const Matrix widened{TensorType::F32, rows, cols, static_cast<size_t>(cols) * 4,
                         reinterpret_cast<const std::byte*>(q.values.data())};
    for (int64_t n : {2, 5, 8, 17}) {
      const auto x = make_activations(n, cols, static_cast<uint32_t>(40 + n));
      std::vector<float> got(static_cast<size_t>(n * rows)), want(got.size());
      gemm_rows_avx512(q.m, 0, rows, x.data(), n, got.data());
      gemm_rows_avx512(widened, 0, rows, x.data(), n, want.data());
      int bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && ++bad <= 3)
          ADD_FAILURE() << "n=" << n << " y[" << i << "] = " << got[i] << ", widened first " << want[i];
      EXPECT_EQ(bad, 0) << "n=" << n;
    }
  }
}

TEST(GemmTile, BatchOneMatchesTheReference) {
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
      for (int64_t cols : {16, 64, 200, 768}) {
        const StoredMatrix w = make_matrix(type, 37, cols, 5);
        const auto x = make_activations(1, cols, 6);
        const QuantizedRow unused;
        std::vector<float> y(37, NAN);
        gemv_rows(w.m, 0, 20, x.data(), unused, y.data());
        gemv_rows(w.m, 20, 37, x.data(), unused, y.data());
        expect_products(w, x, 1, y, 0, 37, 1e-5, name(type) + " gemv cols=" + std::to_string(cols));
      }
  }
}

TEST(GemmTile, ARangeWritesOnlyItsRows) {
  for (const Build& b : builds()) {
    const StoredMatrix w = make_matrix(TensorType::F16, 10, 64, 3);
    const auto x = make_activations(5, 64, 4);
    std::vector<float> y(50, -1.0f);
    b.gemm_rows(w.m, 4, 7, x.data(), 5, y.data());
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t r = 0; r < 10; ++r) {
        if (r >= 4 && r < 7) continue;
        EXPECT_EQ(y[t * 10 + r], -1.0f) << b.name << " t=" << t << " r=" << r;
      }
  }
}

// Batch 1 over Q8_0 quantizes the activations too (as llama.cpp does): the
// error is that of an int8 x, about 1/254 of each |w_i x_i| at worst.
TEST(GemmTile, Q8_0DecodeIsCloseToTheReference) {
  using Gemv = decltype(&gemv_q8_avx2);
  std::vector<std::pair<const char*, Gemv>> kernels{{"avx2", gemv_q8_avx2}};
  if (cpu_has_avx512()) kernels.emplace_back("avx512", gemv_q8_avx512);
  // 1, 3, 7 and 8 blocks: the AVX-512 kernel's rounds of four, pairs and odd last block.
  for (int64_t cols : {32, 96, 224, 256})
    for (const auto& [kname, gemv] : kernels) {
      const StoredMatrix w = make_matrix(TensorType::Q8_0, 37, cols, 11);
      const auto x = make_activations(1, cols, 12);
      QuantizedRow xq;
      quantize_row_q8(x.data(), cols, xq);
      std::vector<float> y(37, NAN);
      gemv(w.m, 0, 20, xq, y.data());
      gemv(w.m, 20, 37, xq, y.data());
      expect_products(w, x, 1, y, 0, 37, 1.0 / 200, std::string("q8_0 gemv ") + kname + " cols=" + std::to_string(cols));
    }
}

// The other block types at batch 1 take quantized activations too (per 256
// for the k-quants), and their own unsigned values and offsets
// (gemv_blocks_avx2): the same bound. One and several blocks a row.
TEST(GemmTile, BlockTypesDecodeIsCloseToTheReference) {
  for (TensorType type : kBlockTypes) {
    const int64_t block = tensor_type_traits(static_cast<uint32_t>(type))->block_elems;
    for (int64_t blocks : {1, 3, 8}) {
      const int64_t cols = block * blocks;
      const StoredMatrix w = make_matrix(type, 37, cols, 13);
      const auto x = make_activations(1, cols, 14);
      QuantizedRow xq;
      if (takes_q8_k(type))
        quantize_row_q8_k(x.data(), cols, xq);
      else
        quantize_row_q8(x.data(), cols, xq);
      std::vector<float> y(37, NAN);
      gemv_rows(w.m, 0, 20, x.data(), xq, y.data());
      gemv_rows(w.m, 20, 37, x.data(), xq, y.data());
      expect_products(w, x, 1, y, 0, 37, 1.0 / 200, name(type) + " gemv cols=" + std::to_string(cols));
    }
  }
}

TEST(QuantizeRowQ8, KeepsTheSignTrickInRange) {
  std::vector<float> x(64, 0.0f);
  x[3] = -5.0f, x[4] = 5.0f, x[40] = 1e-30f;
  QuantizedRow q;
  quantize_row_q8(x.data(), 64, q);
  EXPECT_EQ(q.q[3], -127);
  EXPECT_EQ(q.q[4], 127);
  EXPECT_EQ(q.q[0], 0);
  EXPECT_FLOAT_EQ(q.scale[0], 5.0f / 127.0f);
  EXPECT_EQ(q.q[40], 127);  // a block's largest value maps to 127 however small
  EXPECT_EQ(q.scale.size(), 2u);
  ASSERT_EQ(q.sum16.size(), 4u);  // the sums the offset types' dot products use
  EXPECT_EQ(q.sum16[0], 0);
  EXPECT_EQ(q.sum16[2], 127);
}

// Q8_K, as ggml's: the value of largest magnitude is -127 whatever its
// sign (the scale takes the sign), the first of a tie.
TEST(QuantizeRowQ8K, MapsTheLargestValueToMinus127) {
  std::vector<float> x(512, 0.0f);
  x[1] = 2.0f, x[2] = -2.0f, x[3] = 1.0f, x[300] = -4.0f, x[301] = 2.0f;
  QuantizedRow q;
  quantize_row_q8_k(x.data(), 512, q);
  ASSERT_EQ(q.scale.size(), 2u);
  EXPECT_EQ(q.q[1], -127);
  EXPECT_EQ(q.q[2], 127);
  EXPECT_EQ(q.q[3], -64);  // -63.5 to even
  EXPECT_FLOAT_EQ(q.scale[0], -2.0f / 127.0f);
  EXPECT_EQ(q.q[300], -127);
  EXPECT_FLOAT_EQ(q.scale[1], 4.0f / 127.0f);
  EXPECT_EQ(q.sum16[0], -127 + 127 - 64);
}

// The panel kernel on its own: rows off the 8-row tile's edge (37), columns
// off a vector's (200), activation rows that fill one, two or three vectors
// of a panel and several panels, into a y wider than the matrix (ldy), over
// two row ranges as two work items of one matmul.
TEST(GemmPanel, EveryTypeMatchesTheReference) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  for (TensorType type : kTypes) {
    const int64_t rows = 37, cols = odd_cols(type), ldy = rows + 5;
    const StoredMatrix w = make_matrix(type, rows, cols, 31);
    for (int64_t n : {1, 15, 16, 17, 32, 33, 47, 48, 49, 100, 144}) {
      const auto x = make_activations(n, cols, static_cast<uint32_t>(300 + n));
      const int64_t n_panels = (n + kPanelTokens - 1) / kPanelTokens;
      std::vector<float> panels(static_cast<size_t>(n_panels * kPanelTokens * cols), NAN);
      for (int64_t p = 0; p < n_panels; ++p)
        pack_panel(x.data() + p * kPanelTokens * cols, std::min(kPanelTokens, n - p * kPanelTokens), cols,
                   panels.data() + p * kPanelTokens * cols);
      std::vector<float> y(static_cast<size_t>(n * ldy), -1.0f);
      const PanelSet xs{panels.data(), cols * kPanelTokens, kPanelTokens, n};
      gemm_panels_avx512(w.m, 0, 24, xs, y.data(), ldy, PanelOutput::kByLane);
      gemm_panels_avx512(w.m, 24, rows, xs, y.data(), ldy, PanelOutput::kByLane);
      std::vector<float> packed(static_cast<size_t>(n * rows));
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t r = 0; r < rows; ++r) packed[t * rows + r] = y[t * ldy + r];
        for (int64_t r = rows; r < ldy; ++r) EXPECT_EQ(y[t * ldy + r], -1.0f) << "written past the rows, t=" << t;
      }
      expect_products(w, x, n, packed, 0, rows, 1e-5, std::string("panels ") + name(type) + " n=" + std::to_string(n));
    }
  }
}

// Attention's use: x already stored by column (K transposed: lane t of
// column c at xt[c * ld + t], no packing), y by weight row.
TEST(GemmPanel, UnpackedColumnsIntoRowsMatchTheReference) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const int64_t rows = 19, cols = 64;
  const StoredMatrix w = make_matrix(TensorType::F32, rows, cols, 51);
  for (int64_t n : {5, 48, 100}) {
    const int64_t ld = (n + kPanelTokens - 1) / kPanelTokens * kPanelTokens, ldy = n + 3;
    const auto x = make_activations(n, cols, static_cast<uint32_t>(500 + n));
    std::vector<float> xt(static_cast<size_t>(cols * ld), 0.0f);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < cols; ++c) xt[c * ld + t] = x[t * cols + c];
    std::vector<float> y(static_cast<size_t>(rows * ldy), -1.0f);
    gemm_panels_avx512(w.m, 0, rows, {xt.data(), kPanelTokens, ld, n}, y.data(), ldy, PanelOutput::kByRow);
    std::vector<float> by_lane(static_cast<size_t>(n * rows));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < n; ++t) by_lane[t * rows + r] = y[r * ldy + t];
      for (int64_t t = n; t < ldy; ++t) EXPECT_EQ(y[r * ldy + t], -1.0f) << "written past n, r=" << r;
    }
    expect_products(w, x, n, by_lane, 0, rows, 1e-5, "by row n=" + std::to_string(n));
  }
}

// pack_panel zero-fills the rows past n: the kernel's padded lanes compute
// on zeros, not on whatever the buffer held.
TEST(GemmPanel, PackingZeroesTheRowsPastN) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const auto x = make_activations(5, 3, 1);
  std::vector<float> panel(static_cast<size_t>(3 * kPanelTokens), NAN);
  pack_panel(x.data(), 5, 3, panel.data());
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t t = 0; t < kPanelTokens; ++t)
      EXPECT_EQ(panel[c * kPanelTokens + t], t < 5 ? x[t * 3 + c] : 0.0f) << "c=" << c << " t=" << t;
}

// transpose_rows writes up to 16 rows as lanes of each column (attention's
// K gathered transposed): every column of a multiple of 16, lanes past n
// zero, nothing past the 16th lane touched.
TEST(GemmPanel, TransposedRowsAreLanesOfEachColumn) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const int64_t cols = 48, ld = 21;
  const auto x = make_activations(16, cols, 7);
  for (int64_t n : {1, 5, 15, 16}) {
    const float* rows[16];
    for (int64_t i = 0; i < n; ++i) rows[i] = x.data() + i * cols;
    std::vector<float> dst(static_cast<size_t>(cols * ld), NAN);
    transpose_rows_avx512(rows, n, cols, dst.data(), ld);
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t i = 0; i < 16; ++i)
        EXPECT_EQ(dst[c * ld + i], i < n ? x[i * cols + c] : 0.0f) << "n=" << n << " c=" << c << " i=" << i;
      for (int64_t i = 16; i < ld; ++i) EXPECT_TRUE(std::isnan(dst[c * ld + i])) << "written past lane 16, c=" << c;
    }
  }
}

// matmul and matmul_many as the backend calls them, on both sides of the
// crossover, for every type.
TEST(Matmul, EveryTypeMatchesTheReferenceOnBothPaths) {
  for (TensorType type : kTypes) {
    const int64_t cols = 256;
    const StoredMatrix a = make_matrix(type, 70, cols, 21), b = make_matrix(type, 33, cols, 22);
    for (int64_t n : {1, 2, 8, 15, 16, 31, 32, 64, 65, 130, 300}) {
      const auto x = make_activations(n, cols, static_cast<uint32_t>(100 + n));
      std::vector<float> ya(static_cast<size_t>(n * 70), NAN), yb(static_cast<size_t>(n * 33), NAN);
      const MatmulTarget both[] = {{&a.m, ya.data()}, {&b.m, yb.data()}};
      matmul_many(both, x.data(), n);
      const double rel = is_block_quantized(type) && n == 1 ? 1.0 / 200 : 1e-5;
      const std::string what = std::string(name(type)) + " n=" + std::to_string(n);
      expect_products(a, x, n, ya, 0, 70, rel, what + " first");
      expect_products(b, x, n, yb, 0, 33, rel, what + " second");
    }
  }
}

// The many-rows path of CPUs without AVX-512, called directly so that it is
// checked on every CPU (matmul takes the panels where there is AVX-512).
TEST(Matmul, SgemmMatchesTheReferenceForEveryType) {
  for (TensorType type : kTypes) {
    const int64_t cols = 256, n = 40;
    const StoredMatrix w = make_matrix(type, 70, cols, 61);
    const auto x = make_activations(n, cols, 62);
    std::vector<float> y(static_cast<size_t>(n * 70), NAN);
    matmul_sgemm(w.m, x.data(), n, y.data());
    expect_products(w, x, n, y, 0, 70, 1e-5, std::string("sgemm ") + name(type));
  }
}

// Wide rows split a long batch into several passes of panels (2,048
// columns: two panels a pass, so 200 rows are passes of 96, 96 and 8); each
// pass writes its own rows of y.
TEST(Matmul, PanelsOverSeveralPassesMatchTheReference) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  const int64_t cols = 2048, n = 200;
  const StoredMatrix a = make_matrix(TensorType::F16, 70, cols, 41), b = make_matrix(TensorType::F16, 9, cols, 42);
  const auto x = make_activations(n, cols, 43);
  std::vector<float> ya(static_cast<size_t>(n * 70), NAN), yb(static_cast<size_t>(n * 9), NAN);
  const MatmulTarget both[] = {{&a.m, ya.data()}, {&b.m, yb.data()}};
  matmul_panels(both, x.data(), n);
  expect_products(a, x, n, ya, 0, 70, 1e-5, "passes first");
  expect_products(b, x, n, yb, 0, 9, 1e-5, "passes second");
}

}  // namespace
}  // namespace kvgate
