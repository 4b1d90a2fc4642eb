#include "engine/model/quantize.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

struct Range {
  float min, max, amax, signed_max;  // signed_max: the value of largest magnitude, with its sign
};
Range range_of(const float* x, int64_t n) {
  Range r{x[0], x[0], std::fabs(x[0]), x[0]};
  for (int64_t i = 1; i < n; ++i) {
    r.min = std::min(r.min, x[i]);
    r.max = std::max(r.max, x[i]);
    if (std::fabs(x[i]) > r.amax) r.amax = std::fabs(x[i]), r.signed_max = x[i];
  }
  return r;
}

int clamp_round(float v, int lo, int hi) { return std::clamp(static_cast<int>(std::nearbyint(v)), lo, hi); }
float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// Symmetric 4- or 5-bit blocks (Q4_0, Q5_0): the value of largest magnitude
// maps to the end of the range, -8 or -16, as ggml does, so the other end
// (+7, +15) is never clipped by more than a step.
template <int kBits>
void symmetric(const float* x, uint16_t& d_out, uint8_t* qs, uint32_t* qh) {
  constexpr int kZero = 1 << (kBits - 1);
  const Range r = range_of(x, kQBlock);
  const float d = r.signed_max / -static_cast<float>(kZero);
  d_out = f32_to_f16(d);
  const float inv = inverse(f16_to_f32(d_out));
  uint32_t high = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = clamp_round(x[j] * inv + kZero, 0, 2 * kZero - 1);
    const int hi = clamp_round(x[j + 16] * inv + kZero, 0, 2 * kZero - 1);
    qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
    high |= static_cast<uint32_t>(lo >> 4 & 1) << j | static_cast<uint32_t>(hi >> 4 & 1) << (j + 16);
  }
  if (qh) *qh = high;
}

// Min/offset 4- or 5-bit blocks (Q4_1, Q5_1): x = d * q + m over [min, max].
template <int kBits>
void affine(const float* x, uint16_t& d_out, uint16_t& m_out, uint8_t* qs, uint32_t* qh) {
  constexpr int kTop = (1 << kBits) - 1;
  const Range r = range_of(x, kQBlock);
  d_out = f32_to_f16((r.max - r.min) / kTop);
  m_out = f32_to_f16(r.min);
  const float inv = inverse(f16_to_f32(d_out)), m = f16_to_f32(m_out);
  uint32_t high = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = clamp_round((x[j] - m) * inv, 0, kTop), hi = clamp_round((x[j + 16] - m) * inv, 0, kTop);
    qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
    high |= static_cast<uint32_t>(lo >> 4 & 1) << j | static_cast<uint32_t>(hi >> 4 & 1) << (j + 16);
  }
  if (qh) *qh = high;
}

void store_u32(uint8_t (&dst)[4], uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Q4_K and Q5_K: each 32-value sub-block's own scale (max - min) / top and
// min (-min, at least 0), then both sets as 6-bit multiples of the block's
// d and dmin, then the values against the scales as stored.
template <class Block, int kBits>
void k_quant_4_5(const float* x, Block& b) {
  constexpr int kTop = (1 << kBits) - 1;
  float scale[8], min[8];
  for (int s = 0; s < 8; ++s) {
    const Range r = range_of(x + 32 * s, 32);
    min[s] = std::max(0.0f, -r.min);
    scale[s] = (r.max + min[s]) / kTop;
  }
  const float max_scale = *std::max_element(scale, scale + 8), max_min = *std::max_element(min, min + 8);
  b.d = f32_to_f16(max_scale / 63);
  b.dmin = f32_to_f16(max_min / 63);
  const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
  uint8_t sc[8], mn[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = static_cast<uint8_t>(clamp_round(scale[s] * inverse(d), 0, 63));
    mn[s] = static_cast<uint8_t>(clamp_round(min[s] * inverse(dmin), 0, 63));
  }
  // The packing k_scale_min reads back.
  for (int j = 0; j < 4; ++j) {
    b.scales[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    b.scales[j + 4] = static_cast<uint8_t>(mn[j] | (mn[j + 4] >> 4) << 6);
    b.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | (mn[j + 4] & 0xF) << 4);
  }
  uint8_t q[256];
  for (int s = 0; s < 8; ++s) {
    const float step = d * sc[s], offset = dmin * mn[s];
    for (int l = 0; l < 32; ++l) q[32 * s + l] = static_cast<uint8_t>(clamp_round((x[32 * s + l] + offset) * inverse(step), 0, kTop));
  }
  if constexpr (kBits == 5) std::fill(std::begin(b.qh), std::end(b.qh), uint8_t{0});
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = q[64 * k + l], hi = q[64 * k + 32 + l];
      b.qs[32 * k + l] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
      if constexpr (kBits == 5) b.qh[l] |= static_cast<uint8_t>((lo >> 4) << (2 * k) | (hi >> 4) << (2 * k + 1));
    }
}

// Q6_K: symmetric 16-value sub-blocks (x = d * sc * (q - 32)), sc an int8
// multiple of the block's d.
void q6_k(const float* x, BlockQ6_K& b) {
  float scale[16];
  for (int s = 0; s < 16; ++s) scale[s] = range_of(x + 16 * s, 16).signed_max / -32.0f;
  float amax = 0, top = 0;
  for (float s : scale)
    if (std::fabs(s) > amax) amax = std::fabs(s), top = s;
  b.d = f32_to_f16(top / -128.0f);
  const float d = f16_to_f32(b.d);
  uint8_t q[256];
  for (int s = 0; s < 16; ++s) {
    b.scales[s] = static_cast<int8_t>(clamp_round(scale[s] * inverse(d), -128, 127));
    const float step = d * b.scales[s];
    for (int l = 0; l < 16; ++l) q[16 * s + l] = static_cast<uint8_t>(clamp_round(x[16 * s + l] * inverse(step) + 32, 0, 63));
  }
  for (int half = 0; half < 2; ++half) {
    const uint8_t* v = q + 128 * half;
    uint8_t *ql = b.ql + 64 * half, *qh = b.qh + 32 * half;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((v[l] & 0xF) | (v[l + 64] & 0xF) << 4);
      ql[l + 32] = static_cast<uint8_t>((v[l + 32] & 0xF) | (v[l + 96] & 0xF) << 4);
      qh[l] = static_cast<uint8_t>((v[l] >> 4) | (v[l + 32] >> 4) << 2 | (v[l + 64] >> 4) << 4 | (v[l + 96] >> 4) << 6);
    }
  }
}

void q8_0(const float* x, BlockQ8_0& b) {
  // ggml's Q8_0: scale = max|x| / 127, q = round(x / scale).
  const float d = range_of(x, kQBlock).amax / 127.0f, inv = inverse(d);
  b.scale_f16 = f32_to_f16(d);
  for (int j = 0; j < kQBlock; ++j) b.q[j] = static_cast<int8_t>(std::lround(x[j] * inv));
}

template <class Block, class F>
void each_block(const float* src, void* dst, int64_t n, int64_t block, F f) {
  auto* out = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / block; ++i) f(src + i * block, out[i]);
}

}  // namespace

void quantize_blocks(TensorType type, const float* src, void* dst, int64_t n) {
  switch (type) {
    case TensorType::Q4_0:
      return each_block<BlockQ4_0>(src, dst, n, kQBlock, [](const float* x, BlockQ4_0& b) { symmetric<4>(x, b.d, b.qs, nullptr); });
    case TensorType::Q5_0:
      return each_block<BlockQ5_0>(src, dst, n, kQBlock, [](const float* x, BlockQ5_0& b) {
        uint32_t qh;
        symmetric<5>(x, b.d, b.qs, &qh);
        store_u32(b.qh, qh);
      });
    case TensorType::Q4_1:
      return each_block<BlockQ4_1>(src, dst, n, kQBlock, [](const float* x, BlockQ4_1& b) { affine<4>(x, b.d, b.m, b.qs, nullptr); });
    case TensorType::Q5_1:
      return each_block<BlockQ5_1>(src, dst, n, kQBlock, [](const float* x, BlockQ5_1& b) {
        uint32_t qh;
        affine<5>(x, b.d, b.m, b.qs, &qh);
        store_u32(b.qh, qh);
      });
    case TensorType::Q8_0: return each_block<BlockQ8_0>(src, dst, n, kQBlock, q8_0);
    case TensorType::Q4_K: return each_block<BlockQ4_K>(src, dst, n, kQKBlock, k_quant_4_5<BlockQ4_K, 4>);
    case TensorType::Q5_K: return each_block<BlockQ5_K>(src, dst, n, kQKBlock, k_quant_4_5<BlockQ5_K, 5>);
    case TensorType::Q6_K: return each_block<BlockQ6_K>(src, dst, n, kQKBlock, q6_k);
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16: break;
  }
  throw Error("quantize_blocks: " + std::string(ggml_type_name(static_cast<uint32_t>(type))) +
              " is not a block-quantized type");
}

}  // namespace kvgate
