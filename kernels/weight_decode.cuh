// Device-side: one value of a stored weight row (F32, F16, BF16 or a block
// type) as f32, with the same arithmetic as the host's dequantize_row, so
// that the embedding rows and widened matrices here are bit-identical to
// the CPU's.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "base/error.h"
#include "engine/weights_view.h"
#include "kernels/block_values.h"

namespace kvgate::cuda {

__device__ __forceinline__ float half_bits_to_float(uint16_t h) { return __half2float(__ushort_as_half(h)); }

template <WeightType type>
__device__ __forceinline__ float decode_weight(const unsigned char* row, int64_t i) {
  if constexpr (type == WeightType::kF32) {
    return reinterpret_cast<const float*>(row)[i];
  } else if constexpr (type == WeightType::kF16) {
    return half_bits_to_float(reinterpret_cast<const uint16_t*>(row)[i]);
  } else if constexpr (type == WeightType::kBF16) {
    return __uint_as_float(static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(row)[i]) << 16);
  } else {
    using C = block_values::Codec<type>;
    return block_values::value_at<type>(row + (i / C::kValues) * C::kBytes, static_cast<int>(i % C::kValues));
  }
}

// Calls f(std::integral_constant<WeightType, t>{}) for every type a row can
// be stored in; a type outside WeightType's names is an error, not a
// silent no-op.
template <typename F>
void dispatch_weight_type(WeightType t, F&& f) {
  using W = WeightType;
  switch (t) {
    case W::kF32: f(std::integral_constant<W, W::kF32>{}); return;
    case W::kF16: f(std::integral_constant<W, W::kF16>{}); return;
    case W::kBF16: f(std::integral_constant<W, W::kBF16>{}); return;
    case W::kQ4_0: f(std::integral_constant<W, W::kQ4_0>{}); return;
    case W::kQ4_1: f(std::integral_constant<W, W::kQ4_1>{}); return;
    case W::kQ5_0: f(std::integral_constant<W, W::kQ5_0>{}); return;
    case W::kQ5_1: f(std::integral_constant<W, W::kQ5_1>{}); return;
    case W::kQ8_0: f(std::integral_constant<W, W::kQ8_0>{}); return;
    case W::kQ4_K: f(std::integral_constant<W, W::kQ4_K>{}); return;
    case W::kQ5_K: f(std::integral_constant<W, W::kQ5_K>{}); return;
    case W::kQ6_K: f(std::integral_constant<W, W::kQ6_K>{}); return;
  }
  throw Error("a weight type the CUDA kernels do not know (ggml type " + std::to_string(static_cast<uint32_t>(t)) +
              ")");
}

}  // namespace kvgate::cuda
