// Conversions between f32 and every storage type: F16 and BF16 here, the
// block-quantized types through dequantize.h and quantize.h. Reference
// versions; the kernels widen in registers where it pays.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "engine/model/tensor_type.h"

namespace kvgate {

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  // round to nearest even

inline float bf16_to_f32(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint16_t f32_to_bf16(float f);  // round to nearest even, NaN stays NaN

// Widens one row of n values stored as `type` into out[0:n].
void dequantize_row(TensorType type, const void* src, float* out, int64_t n);
// Narrows n floats into `type`'s storage (n a multiple of the block size).
void quantize_row(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace kvgate
