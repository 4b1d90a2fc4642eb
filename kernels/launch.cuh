// Device-side: launch geometry shared by the row-wise kernels. Rows go on
// the grid's y axis, which holds at most 65535 blocks; kernels loop over
// rows with that stride, so a long prefill is still one launch.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kvgate::cuda {

constexpr int64_t kMaxGridY = 65535;

inline unsigned grid_rows(int64_t n) { return static_cast<unsigned>(std::min(n, kMaxGridY)); }

inline unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace kvgate::cuda
