// How the CUDA backend lays out a fused matrix's parts (kernels/
// fused_layout.h): host arithmetic, run on every machine. A Q4_K_M file's
// Q/K/V (Q4_K, Q4_K, Q6_K) keeps each part's blocks, as two runs; parts of
// one type stay that type; other mixtures widen to f32.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/fused_layout.h"

namespace kvgate {
namespace {

using cuda::FusedLayout;
using cuda::plan_fused_layout;

// Only the shape and type matter to the plan; the host stride is padded to
// show that the device's rows are dense whatever it is.
MatrixView part(WeightType t, int64_t rows, int64_t cols) {
  return {t, rows, cols, dense_row_bytes(t, cols) + 6, nullptr};
}

FusedLayout plan(const std::vector<MatrixView>& parts) {
  std::vector<const MatrixView*> p;
  for (const MatrixView& v : parts) p.push_back(&v);
  return plan_fused_layout(p, "attn_qkv");
}

TEST(FusedLayout, PartsOfOneTypeStayItWithNoRuns) {
  const auto l = plan({part(WeightType::kQ4_K, 512, 512), part(WeightType::kQ4_K, 128, 512),
                       part(WeightType::kQ4_K, 128, 512)});
  EXPECT_EQ(l.type, WeightType::kQ4_K);
  EXPECT_EQ(l.rows, 768);
  EXPECT_EQ(l.row_bytes, 2u * 144);
  EXPECT_EQ(l.bytes, 768u * 2 * 144);
  EXPECT_TRUE(l.runs.empty());
  ASSERT_EQ(l.parts.size(), 3u);
  EXPECT_EQ(l.parts[1].offset, 512u * 288);
  EXPECT_EQ(l.parts[2].offset, 640u * 288);
}

TEST(FusedLayout, BlockTypesThatDifferKeepTheirOwnInRuns) {
  // Q4_K_M's Q/K/V where the layer gets more bits: V in Q6_K.
  const auto l = plan({part(WeightType::kQ4_K, 512, 512), part(WeightType::kQ4_K, 128, 512),
                       part(WeightType::kQ6_K, 128, 512)});
  EXPECT_EQ(l.type, WeightType::kQ4_K);
  EXPECT_EQ(l.rows, 768);
  EXPECT_EQ(l.bytes, 640u * 2 * 144 + 128u * 2 * 210);
  ASSERT_EQ(l.runs.size(), 2u);
  EXPECT_EQ(l.runs[0].type, WeightType::kQ4_K);
  EXPECT_EQ(l.runs[0].rows, 640);  // Q and K: one run, one mat-vec launch
  EXPECT_EQ(l.runs[0].offset, 0u);
  EXPECT_EQ(l.runs[1].type, WeightType::kQ6_K);
  EXPECT_EQ(l.runs[1].rows, 128);
  EXPECT_EQ(l.runs[1].row_bytes, 2u * 210);
  EXPECT_EQ(l.runs[1].offset, 640u * 2 * 144);
  ASSERT_EQ(l.parts.size(), 3u);
  EXPECT_EQ(l.parts[2].offset, l.runs[1].offset);
  // A 32-value type between k-quants (llama.cpp's fallback for rows that
  // are not whole 256-value blocks; here just another block type).
  const auto m = plan({part(WeightType::kQ6_K, 64, 256), part(WeightType::kQ8_0, 64, 256),
                       part(WeightType::kQ6_K, 64, 256)});
  ASSERT_EQ(m.runs.size(), 3u);
  EXPECT_EQ(m.runs[1].type, WeightType::kQ8_0);
  EXPECT_EQ(m.runs[1].offset, 64u * 210);
  EXPECT_EQ(m.runs[2].offset, 64u * 210 + 64u * 8 * 34);
  EXPECT_EQ(m.bytes, 128u * 210 + 64u * 8 * 34);
}

TEST(FusedLayout, OtherMixturesWidenToF32) {
  const auto l = plan({part(WeightType::kF16, 64, 256), part(WeightType::kQ8_0, 32, 256)});
  EXPECT_EQ(l.type, WeightType::kF32);
  EXPECT_TRUE(l.runs.empty());
  EXPECT_EQ(l.row_bytes, 256u * 4);
  EXPECT_EQ(l.bytes, 96u * 256 * 4);
  EXPECT_EQ(l.parts[1].type, WeightType::kF32);
  EXPECT_EQ(l.parts[1].offset, 64u * 256 * 4);
}

TEST(FusedLayout, RefusesPartsOfDifferentWidthsOrNotWholeBlocks) {
  EXPECT_THROW(plan({part(WeightType::kQ4_K, 8, 256), part(WeightType::kQ4_K, 8, 512)}), Error);
  try {
    plan({part(WeightType::kQ4_0, 8, 288), part(WeightType::kQ4_K, 8, 288)});
    FAIL() << "expected kvgate::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attn_qkv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("256"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvgate
