// How the GEMM widens block-quantized weights for cuBLAS in chunks
// (kernels/widen_plan.h): host arithmetic, run on every machine. Every
// weight row widened exactly once, into its chunk's scratch at its place;
// no piece straddles two runs of types; the scratch bounded.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/widen_plan.h"

namespace kvgate {
namespace {

using cuda::widen_chunk_rows;
using cuda::widen_pieces;

TEST(WidenPlan, ChunkRowsFitTheScratch) {
  EXPECT_EQ(widen_chunk_rows(4096), 16384);  // 256 MiB of f32 rows of 4,096
  EXPECT_EQ(widen_chunk_rows(4096, 4096 * 4 * 3 + 5), 3);
  EXPECT_EQ(widen_chunk_rows(4096, 100), 1);  // at least a row, whatever the scratch
  // Llama 3's output head (128,256 x 4,096) in 8 chunks of 16,384 rows and one of 13,568.
  const int64_t head[] = {128256};
  const auto p = widen_pieces(head, widen_chunk_rows(4096));
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(p.back().chunk_first, 7 * 16384);
  EXPECT_EQ(p.back().chunk_rows, 128256 - 7 * 16384);
}

// Each matrix row is in exactly one piece, at the scratch row its place in
// its chunk gives, within its run; a chunk's pieces are consecutive.
void expect_covers(const std::vector<int64_t>& runs, int64_t chunk_rows) {
  const auto pieces = widen_pieces(runs, chunk_rows);
  int64_t total = 0;
  std::vector<int64_t> run_start;
  for (const int64_t r : runs) run_start.push_back(total), total += r;
  std::vector<int> seen(static_cast<size_t>(total), 0);
  int64_t last_chunk = -1;
  for (const auto& p : pieces) {
    ASSERT_LT(p.run, runs.size());
    EXPECT_GE(p.chunk, last_chunk) << "chunks in order";
    last_chunk = p.chunk;
    EXPECT_EQ(p.chunk_first, p.chunk * chunk_rows);
    EXPECT_LE(p.chunk_rows, chunk_rows);
    EXPECT_GT(p.rows, 0);
    EXPECT_LE(p.first + p.rows, runs[p.run]) << "a piece stays within its run";
    const int64_t row = run_start[p.run] + p.first;  // the piece's first row in the matrix
    EXPECT_EQ(p.scratch_row, row - p.chunk_first);
    EXPECT_LE(p.scratch_row + p.rows, p.chunk_rows) << "a piece stays within its chunk";
    for (int64_t r = row; r < row + p.rows; ++r) ++seen[static_cast<size_t>(r)];
  }
  for (int64_t r = 0; r < total; ++r) EXPECT_EQ(seen[static_cast<size_t>(r)], 1) << "row " << r;
}

TEST(WidenPlan, PiecesCoverEveryRowOnceWithinRunsAndChunks) {
  expect_covers({37}, 1000);            // one chunk, one piece: what small matrices do
  expect_covers({37}, 10);              // chunks of one run
  expect_covers({512, 128, 128}, 768);  // a Q4_K_M Q/K/V: Q and K one run, V another, one chunk
  expect_covers({640, 128}, 100);       // runs across chunk edges
  expect_covers({3, 1, 5}, 2);
  expect_covers({7, 9}, 1);
}

TEST(WidenPlan, AChunkOfSeveralRunsIsOneGemm) {
  const int64_t runs[] = {640, 128};
  const auto p = widen_pieces(runs, 1024);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].chunk, p[1].chunk);
  EXPECT_EQ(p[1].scratch_row, 640);
  EXPECT_EQ(p[1].chunk_rows, 768);
}

}  // namespace
}  // namespace kvgate
