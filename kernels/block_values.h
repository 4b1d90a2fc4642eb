// The values of one block of each block-quantized weight type (Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K; layouts in
// engine/model/quant_blocks.h, which kernels/ may not include, so they are
// read here by byte offset), widened to f32 with the same roundings as the
// host's dequantization (engine/model/dequantize.cpp), so that every
// kernel that reads a quantized weight reads the CPU's value bit for bit.
//
// Host and device: the device kernels (weight_decode.cuh, quant_matvec.cu)
// call these, and tests/kernels/block_values_test.cpp runs the same code on
// the host against dequantize_row, which is how CI, with no GPU, checks the
// device's arithmetic.
//
// The roundings. Every product but the last is exact: d and dmin are f16
// (11 significant bits), a sub-block's scale or min at most 8 bits, a
// quant at most 6, so d * scale (at most 19 bits) and Q4_1 / Q5_1 / Q4_K /
// Q5_K's q * d and d1 * q (at most 22) fit f32's 24. Each value is then its
// exact expression rounded once, whether the host's `d1 * q - m1` is fused
// or not (gcc's default -ffp-contract=fast fuses it: dequantize_blocks is
// vfmadd / vfmsub), and Q6_K's d * scale * q rounds only at its second
// product. The code follows the host's operations anyway, fused where it
// fuses (fma) and rounded alone where it is not (__fmul_rn, which nvcc
// never fuses into a neighbouring add), so that the equality does not rest
// on the argument alone.
//
// Every block is read a byte at a time: a row's blocks are only 2-byte
// aligned (their sizes are even but not multiples of 4), and callers index
// them anywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/weights_view.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define KVGATE_BLOCK_FN __host__ __device__ __forceinline__
#else
#define KVGATE_BLOCK_FN inline
#endif

namespace kvgate::block_values {

// f16 bits as f32: exact either way, so the device's conversion and the
// host's bit manipulation give the same float.
KVGATE_BLOCK_FN float f16(const unsigned char* p) {
  const auto h = static_cast<uint16_t>(p[0] | (p[1] << 8));
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);  // inf, NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((man & 0x400) == 0) man <<= 1, --exp;
    bits = sign | (exp << 23) | ((man & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// a * b rounded once, never fused with what uses it.
KVGATE_BLOCK_FN float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
// a * b + c rounded once.
KVGATE_BLOCK_FN float fused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Each type's codec: kValues and kBytes per block; scale(block, j) the
// factors value j shares with its neighbours (the whole block for the
// 32-value types, its sub-block of 32 or 16 for the k-quants); value(block,
// s, j) value j with them. Split so that a kernel widening 8 neighbouring
// values (8-aligned: a sub-block is at least 16) computes their scale once;
// value(block, scale(block, j), j) is value j, however it is called.
template <WeightType T>
struct Codec;

// Value j's 4 low bits in a 16-byte run of nibbles holding 32 values: value
// j < 16 in the low nibble of byte j, value j + 16 in the high.
KVGATE_BLOCK_FN int nibble32(const unsigned char* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }
// Bit j of a 4-byte little-endian run.
KVGATE_BLOCK_FN int bit32(const unsigned char* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

template <>
struct Codec<WeightType::kQ4_0> {  // d@0, qs@2
  static constexpr int kValues = 32, kBytes = 18;
  struct Scale {
    float d;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int) { return {f16(b)}; }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return mul(static_cast<float>(nibble32(b + 2, j) - 8), s.d);
  }
};

template <>
struct Codec<WeightType::kQ4_1> {  // d@0, m@2, qs@4
  static constexpr int kValues = 32, kBytes = 20;
  struct Scale {
    float d, m;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int) { return {f16(b), f16(b + 2)}; }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return fused(static_cast<float>(nibble32(b + 4, j)), s.d, s.m);
  }
};

template <>
struct Codec<WeightType::kQ5_0> {  // d@0, qh@2, qs@6
  static constexpr int kValues = 32, kBytes = 22;
  struct Scale {
    float d;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int) { return {f16(b)}; }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return mul(static_cast<float>((nibble32(b + 6, j) | bit32(b + 2, j) << 4) - 16), s.d);
  }
};

template <>
struct Codec<WeightType::kQ5_1> {  // d@0, m@2, qh@4, qs@8
  static constexpr int kValues = 32, kBytes = 24;
  struct Scale {
    float d, m;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int) { return {f16(b), f16(b + 2)}; }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return fused(static_cast<float>(nibble32(b + 8, j) | bit32(b + 4, j) << 4), s.d, s.m);
  }
};

template <>
struct Codec<WeightType::kQ8_0> {  // d@0, q@2 (int8)
  static constexpr int kValues = 32, kBytes = 34;
  struct Scale {
    float d;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int) { return {f16(b)}; }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return mul(static_cast<float>(static_cast<int8_t>(b[2 + j])), s.d);
  }
};

// Q4_K and Q5_K: sub-block k (32 values) has a 6-bit scale and min packed
// in 12 bytes (quant_blocks.h's k_scale_min); its values are d * scale *
// q - dmin * min, q from 32 bytes of nibbles per 64 values (the first
// sub-block of each 64 in the low nibbles, the second in the high), and
// for Q5_K a 5th bit, bit k of qh[j % 32].
struct KScale {
  float d1, m1;
};
KVGATE_BLOCK_FN KScale k_scale(const unsigned char* b, int sub) {
  const unsigned char* s = b + 4;
  int sc, mn;
  if (sub < 4) {
    sc = s[sub] & 63;
    mn = s[sub + 4] & 63;
  } else {
    sc = (s[sub + 4] & 0xF) | ((s[sub - 4] >> 6) << 4);
    mn = (s[sub + 4] >> 4) | ((s[sub] >> 6) << 4);
  }
  return {mul(f16(b), static_cast<float>(sc)), mul(f16(b + 2), static_cast<float>(mn))};
}
// The low 4 bits of value j of a Q4_K / Q5_K block whose nibbles are at qs.
KVGATE_BLOCK_FN int k_nibble(const unsigned char* qs, int j) {
  const unsigned char q = qs[(j / 64) * 32 + j % 32];
  return (j / 32) % 2 == 0 ? q & 0xF : q >> 4;
}

template <>
struct Codec<WeightType::kQ4_K> {  // d@0, dmin@2, scales@4, qs@16
  static constexpr int kValues = 256, kBytes = 144;
  using Scale = KScale;
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int j) { return k_scale(b, j / 32); }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    return fused(s.d1, static_cast<float>(k_nibble(b + 16, j)), -s.m1);
  }
};

template <>
struct Codec<WeightType::kQ5_K> {  // d@0, dmin@2, scales@4, qh@16, qs@48
  static constexpr int kValues = 256, kBytes = 176;
  using Scale = KScale;
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int j) { return k_scale(b, j / 32); }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    const int q = k_nibble(b + 48, j) | ((b[16 + j % 32] >> (j / 32)) & 1) << 4;
    return fused(s.d1, static_cast<float>(q), -s.m1);
  }
};

// Q6_K: per 128 values, 64 bytes of low nibbles (ql) and 32 of 2-bit highs
// (qh); within them quarter g (32 values) takes the low nibbles of ql[32 (g
// % 2) + l] for g < 2 and the high for g >= 2, and bits 2g, 2g + 1 of
// qh[l]. An int8 scale per 16 values; value = d * scale * (q - 32), d *
// scale rounded first.
template <>
struct Codec<WeightType::kQ6_K> {  // ql@0, qh@128, scales@192, d@208
  static constexpr int kValues = 256, kBytes = 210;
  struct Scale {
    float dsc;
  };
  KVGATE_BLOCK_FN static Scale scale(const unsigned char* b, int j) {
    return {mul(f16(b + 208), static_cast<float>(static_cast<int8_t>(b[192 + j / 16])))};
  }
  KVGATE_BLOCK_FN static float value(const unsigned char* b, Scale s, int j) {
    const int half = j / 128, g = (j % 128) / 32, l = j % 32;
    const unsigned char lo = b[64 * half + 32 * (g % 2) + l];
    const int q = (g < 2 ? lo & 0xF : lo >> 4) | ((b[128 + 32 * half + l] >> (2 * g)) & 3) << 4;
    return mul(s.dsc, static_cast<float>(q - 32));
  }
};

// Value j (< kValues) of the block at b.
template <WeightType T>
KVGATE_BLOCK_FN float value_at(const unsigned char* b, int j) {
  return Codec<T>::value(b, Codec<T>::scale(b, j), j);
}

}  // namespace kvgate::block_values

#undef KVGATE_BLOCK_FN
