// Device-side: one value of a stored weight row (F32, F16, BF16, Q8_0) as
// f32, with the same arithmetic as the host's dequantize_row, so that the
// embedding rows and widened matrices here are bit-identical to the CPU's.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "engine/weights_view.h"

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
    // Q8_0: 34-byte blocks, an f16 scale then 32 int8s; read bytewise, as a
    // block's scale is only 2-byte aligned.
    const unsigned char* block = row + (i / 32) * 34;
    const uint16_t scale_bits = static_cast<uint16_t>(block[0] | (block[1] << 8));
    const auto q = static_cast<int8_t>(block[2 + i % 32]);
    return __fmul_rn(half_bits_to_float(scale_bits), static_cast<float>(q));
  }
}

// Calls f(std::integral_constant<WeightType, t>{}).
template <typename F>
void dispatch_weight_type(WeightType t, F&& f) {
  switch (t) {
    case WeightType::kF32: f(std::integral_constant<WeightType, WeightType::kF32>{}); return;
    case WeightType::kF16: f(std::integral_constant<WeightType, WeightType::kF16>{}); return;
    case WeightType::kBF16: f(std::integral_constant<WeightType, WeightType::kBF16>{}); return;
    case WeightType::kQ8_0: f(std::integral_constant<WeightType, WeightType::kQ8_0>{}); return;
  }
}

}  // namespace kvgate::cuda
