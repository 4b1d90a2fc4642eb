// What the attention kernels are told about a step: the query rows, their
// positions, and the block tables to read K/V through. Built on the host by
// the step plan (step_plan.h) and copied to the device with the rest of the
// step's metadata. A row at position p attends to positions [0, p] of its
// sequence; position p lives in block table[p / B], slot p % B.
#pragma once

#include <cstdint>

namespace kvgate::cuda {

struct AttentionShape {
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // n_heads / n_kv_heads query heads share a KV head (GQA)
  int32_t head_dim = 0;    // at most kMaxHeadDim
  float scale = 0;         // 1 / sqrt(head_dim)
};
inline constexpr int32_t kMaxHeadDim = 256;

// A decoding sequence's one new token: flat row `row` at position `pos`;
// its block table starts at element `table` of the step's table array.
struct DecodeQuery {
  int32_t row, pos, table;
};

// A tile of a prefilling sequence's new tokens: rows [row, row + n) at
// positions [pos, pos + n), n <= kPrefillTileRows.
struct PrefillTile {
  int32_t row, n, pos, table;
};
inline constexpr int32_t kPrefillTileRows = 16;

}  // namespace kvgate::cuda
