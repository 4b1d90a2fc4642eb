#include "engine/model/dequantize.h"

#include "base/error.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Each loop below is written as ggml writes the value (d * q, d * q + m,
// d1 * q - m1): under the build's floating-point contraction both compile
// the same expression to the same fused or unfused operations.

void q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const float d = f16_to_f32(b[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
      y[j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const float d = f16_to_f32(b[i].d), m = f16_to_f32(b[i].m);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(b[i].qs[j] & 0xF) * d + m;
      y[j + 16] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

inline uint32_t high_bits(const uint8_t (&qh)[4]) {
  return uint32_t{qh[0]} | uint32_t{qh[1]} << 8 | uint32_t{qh[2]} << 16 | uint32_t{qh[3]} << 24;
}

void q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const float d = f16_to_f32(b[i].d);
    const uint32_t qh = high_bits(b[i].qh);
    for (int j = 0; j < 16; ++j) {
      const int lo = (b[i].qs[j] & 0xF) | static_cast<int>((qh >> j) << 4 & 0x10);
      const int hi = (b[i].qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
      y[j] = static_cast<float>(lo - 16) * d;
      y[j + 16] = static_cast<float>(hi - 16) * d;
    }
  }
}

void q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const float d = f16_to_f32(b[i].d), m = f16_to_f32(b[i].m);
    const uint32_t qh = high_bits(b[i].qh);
    for (int j = 0; j < 16; ++j) {
      const int lo = (b[i].qs[j] & 0xF) | static_cast<int>((qh >> j) << 4 & 0x10);
      const int hi = (b[i].qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
      y[j] = static_cast<float>(lo) * d + m;
      y[j + 16] = static_cast<float>(hi) * d + m;
    }
  }
}

void q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const float d = f16_to_f32(b[i].scale_f16);
    for (int j = 0; j < kQBlock; ++j) y[j] = static_cast<float>(b[i].q[j]) * d;
  }
}

// Q4_K and Q5_K share their walk: 64 values at a time, two sub-blocks of
// 32 from the same 32 bytes of low bits (low nibbles, then high).
template <class Block, bool kFifth>
void k_quant_4_5(const Block* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int k = 0; k < 4; ++k, q += 32, y += 64) {
      const KScaleMin a = k_scale_min(b[i].scales, 2 * k), c = k_scale_min(b[i].scales, 2 * k + 1);
      const float d1 = d * a.scale, m1 = dmin * a.min, d2 = d * c.scale, m2 = dmin * c.min;
      for (int l = 0; l < 32; ++l) {
        int lo = q[l] & 0xF;
        if constexpr (kFifth) lo += (b[i].qh[l] >> (2 * k) & 1) << 4;
        y[l] = d1 * static_cast<float>(lo) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        int hi = q[l] >> 4;
        if constexpr (kFifth) hi += (b[i].qh[l] >> (2 * k + 1) & 1) << 4;
        y[32 + l] = d2 * static_cast<float>(hi) - m2;
      }
    }
  }
}

void q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    const uint8_t *ql = b[i].ql, *qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; ++l) {
        const int s = l / 16;
        const int q1 = ((ql[l] & 0xF) | ((qh[l] >> 0 & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | ((qh[l] >> 2 & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[s]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace

void dequantize_blocks(TensorType type, const void* src, float* out, int64_t n) {
  switch (type) {
    case TensorType::Q4_0: return q4_0(static_cast<const BlockQ4_0*>(src), out, n / kQBlock);
    case TensorType::Q4_1: return q4_1(static_cast<const BlockQ4_1*>(src), out, n / kQBlock);
    case TensorType::Q5_0: return q5_0(static_cast<const BlockQ5_0*>(src), out, n / kQBlock);
    case TensorType::Q5_1: return q5_1(static_cast<const BlockQ5_1*>(src), out, n / kQBlock);
    case TensorType::Q8_0: return q8_0(static_cast<const BlockQ8_0*>(src), out, n / kQBlock);
    case TensorType::Q4_K: return k_quant_4_5<BlockQ4_K, false>(static_cast<const BlockQ4_K*>(src), out, n / kQKBlock);
    case TensorType::Q5_K: return k_quant_4_5<BlockQ5_K, true>(static_cast<const BlockQ5_K*>(src), out, n / kQKBlock);
    case TensorType::Q6_K: return q6_k(static_cast<const BlockQ6_K*>(src), out, n / kQKBlock);
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16: break;
  }
  throw Error("dequantize_blocks: " + std::string(ggml_type_name(static_cast<uint32_t>(type))) +
              " is not a block-quantized type");
}

}  // namespace kvgate
