// The fused dequantize-matvec of the block types (kernels/quant_matvec.h)
// and their widening (convert.h's widen_rows): on a device, each weight
// exactly as the host's dequantize_row widens it, for every block type,
// whichever lane, piece or row read it. Without one, the arguments it
// refuses before launching anything (these run on any machine).
#include <algorithm>
#include <functional>
#include <random>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "kernels/convert.h"
#include "kernels/quant_matvec.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

constexpr TensorType kBlockTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                      TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

std::string name_of(TensorType t) { return std::string(ggml_type_name(static_cast<uint32_t>(t))); }

// `rows` rows of `cols` normal values quantized as `type`, and the same
// rows as dequantize_row widens them.
struct QuantRows {
  size_t row_bytes;
  std::vector<unsigned char> stored;
  std::vector<float> wide;
};
QuantRows quant_rows(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  QuantRows q;
  q.row_bytes = dense_row_bytes(static_cast<WeightType>(type), cols);
  q.stored.resize(rows * q.row_bytes);
  q.wide.resize(static_cast<size_t>(rows * cols));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    // Row 1 off-centre and tiny (f16 subnormal scales; the _1 and K-quant mins).
    for (auto& v : row) v = r == 1 ? 1e-4f * (nd(rng) + 1.0f) : nd(rng);
    quantize_row(type, row.data(), q.stored.data() + r * q.row_bytes, cols);
    dequantize_row(type, q.stored.data() + r * q.row_bytes, &q.wide[r * cols], cols);
  }
  return q;
}

void expect_refused(const std::function<void()>& call, const std::string& because) {
  try {
    call();
    ADD_FAILURE() << "expected kvgate::Error: " << because;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(because), std::string::npos) << e.what();
  }
}

// The checks run before any CUDA call, so the pointers are never read.
TEST(QuantMatvecArguments, RefusedBeforeLaunching) {
  alignas(16) float x[512] = {};
  float y[64] = {};
  const unsigned char w[4] = {};
  const auto q4k = WeightType::kQ4_K;
  expect_refused([&] { cuda::quant_matvec(WeightType::kF16, w, 512, 2, 256, x, 1, y, 2, 0, nullptr); },
                 "not a block type");
  expect_refused([&] { cuda::quant_matvec(WeightType::kBF16, w, 512, 2, 256, x, 1, y, 2, 0, nullptr); },
                 "not a block type");
  expect_refused([&] { cuda::quant_matvec(q4k, w, 144, 2, 256, x, cuda::kQuantMatvecMaxRows + 1, y, 2, 0, nullptr); },
                 "activation rows");
  // A k-quant row is whole 256-value blocks; a 32-value type's 32.
  expect_refused([&] { cuda::quant_matvec(q4k, w, 144, 2, 128, x, 1, y, 2, 0, nullptr); }, "not whole blocks of 256");
  expect_refused([&] { cuda::quant_matvec(WeightType::kQ4_0, w, 18, 2, 48, x, 1, y, 2, 0, nullptr); },
                 "not whole blocks of 32");
  expect_refused([&] { cuda::quant_matvec(q4k, w, 143, 2, 256, x, 1, y, 2, 0, nullptr); }, "closer than");
  expect_refused([&] { cuda::quant_matvec(q4k, w, 144, 2, 256, x + 1, 1, y, 2, 0, nullptr); }, "16-byte aligned");
  expect_refused([&] { cuda::quant_matvec(q4k, w, 144, 2, 256, x, 1, y, 1, 0, nullptr); }, "ldy");
  // Nothing to do is not an error, and launches nothing.
  EXPECT_NO_THROW(cuda::quant_matvec(q4k, w, 144, 0, 256, x, 1, y, 1, 0, nullptr));
  EXPECT_NO_THROW(cuda::quant_matvec(q4k, w, 144, 2, 256, x, 0, y, 2, 0, nullptr));
}

class CudaQuantMatvec : public CudaTest, public ::testing::WithParamInterface<TensorType> {};

// With x one-hot at column c every other product is an exact zero, so
// y[t][r] is w[r][c] as dequantize_row widens it; each of n rows has its
// one-hot column elsewhere. Widths of whole warp steps (256 columns) and
// of a short last step (96; 4,096 plus two blocks), rows odd (the last
// thread block has a row to spare), rows as densely stored as the type
// packs them (Q4_0's 54 or 2,340 bytes: rows only 2-byte aligned).
TEST_P(CudaQuantMatvec, WeightsAreTheHostsBitForBit) {
  const TensorType type = GetParam();
  const auto wt = static_cast<WeightType>(type);
  const int64_t k = weight_block(wt).values;
  for (const int64_t cols : {k == 32 ? int64_t{96} : int64_t{256}, 4096 + 2 * k}) {
    const int64_t rows = 5;
    const QuantRows q = quant_rows(type, rows, cols, 23);
    auto dw = to_device(q.stored);
    // Piece, block and warp-step edges, those within the row.
    std::vector<int64_t> picks;
    for (const int64_t c : {int64_t{0}, int64_t{7}, int64_t{8}, int64_t{31}, int64_t{32}, int64_t{255}, int64_t{256},
                            int64_t{2048 + 17}, cols - 9, cols - 1})
      if (c < cols) picks.push_back(c);
    for (int64_t n = 1; n <= cuda::kQuantMatvecMaxRows; n += 3) {
      for (size_t p = 0; p < picks.size(); ++p) {
        std::vector<float> x(static_cast<size_t>(n * cols), 0.0f);
        for (int64_t t = 0; t < n; ++t) x[t * cols + picks[(p + t) % picks.size()]] = 1.0f;
        auto dx = to_device(x);
        auto dy = to_device(std::vector<float>(static_cast<size_t>(n * rows), 0.0f));
        cuda::quant_matvec(wt, dw.as(), q.row_bytes, rows, cols, dx.as<float>(), n, dy.as<float>(), rows, 0.0f,
                           nullptr);
        const auto y = to_host<float>(dy, static_cast<size_t>(n * rows));
        for (int64_t t = 0; t < n; ++t) {
          const int64_t c = picks[(p + t) % picks.size()];
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_EQ(y[t * rows + r], q.wide[r * cols + c])
                << "cols " << cols << ", n " << n << ", activation row " << t << ", weight row " << r << ", column "
                << c;
        }
      }
    }
  }
}

// widen_rows, the prefill path's first step: the host's values, bit for
// bit, into a dense f32 matrix, from rows any stride apart.
TEST_P(CudaQuantMatvec, WidenedRowsAreTheHostsBitForBit) {
  const TensorType type = GetParam();
  const auto wt = static_cast<WeightType>(type);
  const int64_t rows = 7, cols = 2 * 256;
  const QuantRows q = quant_rows(type, rows, cols, 29);
  // Stored with 2 bytes of padding after each row, as a host view may be.
  const size_t stride = q.row_bytes + 2;
  std::vector<unsigned char> padded(rows * stride, 0xEE);
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(q.stored.data() + r * q.row_bytes, q.row_bytes, padded.data() + r * stride);
  auto dw = to_device(padded);
  cuda::DeviceBuffer out(static_cast<size_t>(rows * cols) * sizeof(float), "widened");
  cuda::widen_rows(wt, dw.as(), stride, rows, cols, out.as<float>(), nullptr);
  const auto got = to_host<float>(out, static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], q.wide[i]) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Types, CudaQuantMatvec, ::testing::ValuesIn(kBlockTypes),
                         [](const auto& param_info) { return name_of(param_info.param); });

}  // namespace
}  // namespace kvgate
