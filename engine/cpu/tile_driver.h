// The loop both builds of gemm_rows run around their register tile
// (gemm_tile_avx2.cpp, gemm_tile_avx512.cpp): weight rows R at a time
// (block-quantized rows widened first into a thread-local buffer where the
// build's tile does not widen them in its loads), the activation rows
// split as evenly as tiles of at most C allow (9 rows are 5 + 4, not
// 8 + 1), each tile's dot products stored into y.
//
// Included only by those two files, each compiled for its own instruction
// set. drive_tiles is a template over the caller's tile, a lambda local to
// that file, so the two builds never share an instantiation. It calls no
// inline library code (std::vector, std::min): the linker keeps one copy of
// such code for the whole program, and the AVX-512 file's copy would then
// run on CPUs without AVX-512.
#pragma once

#include <cstdint>

#include "engine/model/float_convert.h"
#include "engine/model/llama_weights.h"

namespace kvgate::cpu {

// This thread's scratch for widened rows, at least `floats` long;
// defined in the baseline build (gemm_tile_avx2.cpp).
float* widen_scratch(int64_t floats);

// tile(nc, w_rows, x_rows, out) sets out[k][j] = w_rows[k] . x_rows[j] for
// k < R, j < nc; y is [n][w.rows].
//
// The order of the two loops: for F32, F16 and BF16 the activation tiles (C
// rows each) are the outer loop, so that each stays in L1 while the range's
// weight rows pass over it; the other way round, every weight tile streamed
// all n activation rows from L2 (96 KiB at 32 rows of 768). Block-quantized
// rows are widened into a buffer first, once per weight tile, so for them
// the weight tiles are the outer loop; but where `tile_widens` (the AVX-512
// tile widens the 32-value types in its loads) they are read in place like
// the float types. One loop nest serves both
// orders: the tile must have a single call site, or GCC stops inlining it
// and spills its accumulators (3x slower).
template <int R, int C, class Tile>
void drive_tiles(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y, bool tile_widens,
                 Tile tile) {
  const int64_t cols = w.cols;
  const int64_t tiles = (n + C - 1) / C, weight_tiles = (r1 - r0 + R - 1) / R;
  const bool widen = is_block_quantized(w.type) && !tile_widens;
  float* wide = widen ? widen_scratch(R * cols) : nullptr;
  const bool weights_outer = wide != nullptr;
  const int64_t outer = weights_outer ? weight_tiles : tiles, inner = weights_outer ? tiles : weight_tiles;
  const void* wr[R];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t t = weights_outer ? i : o;
      const int64_t r = r0 + (weights_outer ? o : i) * R;
      const int nr = r1 - r < R ? static_cast<int>(r1 - r) : R;
      if (!weights_outer || i == 0) {
        // A short last tile repeats its last row rather than reading past r1.
        for (int k = 0; k < R; ++k) wr[k] = w.row(r + (k < nr ? k : nr - 1));
        if (wide) {
          for (int k = 0; k < R; ++k) {
            dequantize_row(w.type, wr[k], wide + k * cols, cols);
            wr[k] = wide + k * cols;
          }
        }
      }
      // Activation tile t: rows [t0, t0 + nc), n split as evenly as tiles
      // of at most C allow (9 rows are 5 + 4, not 8 + 1).
      const int64_t t0 = t * (n / tiles) + (t < n % tiles ? t : n % tiles);
      const int nc = static_cast<int>(n / tiles + (t < n % tiles ? 1 : 0));
      const float* xs[C];
      for (int j = 0; j < nc; ++j) xs[j] = x + (t0 + j) * cols;
      float out[R][C];
      tile(nc, wr, xs, out);
      for (int j = 0; j < nc; ++j)
        for (int k = 0; k < nr; ++k) y[(t0 + j) * w.rows + r + k] = out[k][j];
    }
}

}  // namespace kvgate::cpu
