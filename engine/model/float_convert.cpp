#include "engine/model/float_convert.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "base/error.h"
#include "engine/model/dequantize.h"
#include "engine/model/quantize.h"

namespace kvgate {

float f16_to_f32(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }
uint16_t f32_to_f16(float f) {
  return static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

uint16_t f32_to_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

void dequantize_row(TensorType type, const void* src, float* out, int64_t n) {
  if (is_block_quantized(type)) return dequantize_blocks(type, src, out, n);
  switch (type) {
    case TensorType::F32:
      std::copy_n(static_cast<const float*>(src), n, out);
      return;
    case TensorType::F16: {
      auto* h = static_cast<const uint16_t*>(src);
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
      for (; i < n; ++i) out[i] = f16_to_f32(h[i]);
      return;
    }
    case TensorType::BF16: {
      auto* b = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(b[i]);
      return;
    }
    default: break;  // the block types, above
  }
  throw Error("dequantize_row: unsupported tensor type");
}

void quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  if (is_block_quantized(type)) return quantize_blocks(type, src, dst, n);
  switch (type) {
    case TensorType::F32:
      std::copy_n(src, n, static_cast<float*>(dst));
      return;
    case TensorType::F16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_f16(src[i]);
      return;
    }
    case TensorType::BF16: {
      auto* b = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) b[i] = f32_to_bf16(src[i]);
      return;
    }
    default: break;  // the block types, above
  }
  throw Error("quantize_row: unsupported tensor type");
}

}  // namespace kvgate
