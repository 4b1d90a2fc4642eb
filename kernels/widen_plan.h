// How a GEMM widens block-quantized weights for cuBLAS (gemm.h: more rows
// than the mat-vec passes take): in chunks of weight rows within a fixed
// f32 scratch, each chunk widened and then multiplied into its columns of
// y. Widened whole, an output head would hold vocab x dim x 4 bytes of
// scratch for the backend's life (2.1 GB for Llama 3's 128,256 x 4,096),
// memory the KV cache would otherwise have; at 256 MiB a chunk of a
// 4,096-wide matrix is still 16,384 weight rows, a GEMM large enough to
// run at cuBLAS's full rate. Host arithmetic only, tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvgate::cuda {

inline constexpr size_t kWidenScratchBytes = size_t{256} << 20;

// Weight rows a chunk of a `cols`-wide matrix may have in `scratch_bytes`
// of f32 (at least one row).
int64_t widen_chunk_rows(int64_t cols, size_t scratch_bytes = kWidenScratchBytes);

// One widening: `rows` rows of run `run` (a matrix's runs of one type, in
// order: DeviceMatrix::parts, or the whole matrix as one), from its row
// `first`, into the scratch at row `scratch_row` of chunk `chunk`, which
// covers the matrix's rows [chunk_first, chunk_first + chunk_rows).
struct WidenPiece {
  int64_t chunk, chunk_first, chunk_rows;
  size_t run;
  int64_t first, rows, scratch_row;
};

// The pieces that widen a matrix of runs of `run_rows` rows each in chunks
// of at most `chunk_rows` rows, in order: each chunk's pieces together
// cover its rows exactly once, a piece never straddles two runs.
std::vector<WidenPiece> widen_pieces(std::span<const int64_t> run_rows, int64_t chunk_rows);

}  // namespace kvgate::cuda
