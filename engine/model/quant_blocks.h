// The block layouts of ggml's quantized tensor types, as GGUF files store
// them: a row of a quantized matrix is a run of these blocks along its
// innermost dimension, read in place from the mapped file.
//
// Two families. The 32-value blocks (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) carry
// one f16 scale d (and for _1 an f16 offset m): x = d * q (+ m), with q
// 4, 5 or 8 bits, centred on zero for _0 (q - 8, q - 16). The k-quants
// (Q4_K, Q5_K, Q6_K) pack 256 values as sub-blocks with their own small
// integer scales, themselves scaled by the block's f16 d (and dmin): Q4_K
// and Q5_K have 8 sub-blocks of 32 with a 6-bit scale and a 6-bit min each,
// x = d * sc * q - dmin * m; Q6_K has 16 sub-blocks of 16 with an int8
// scale, x = d * sc * (q - 32).
//
// Every struct's size is ggml's, and even, so the f16 fields of every block
// of a row are 2-byte aligned wherever the row starts on an even address.
#pragma once

#include <cstdint>

namespace kvgate {

inline constexpr int64_t kQBlock = 32;    // values per block of the 32-value types
inline constexpr int64_t kQKBlock = 256;  // values per k-quant super-block
inline constexpr int64_t kQ8_0Block = kQBlock;

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];  // value j in the low nibble of qs[j], value j + 16 in the high
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];   // bit j (little-endian uint32): the 5th bit of value j
  uint8_t qs[16];  // the low 4 bits, as in Q4_0
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t scale_f16;
  int8_t q[kQBlock];
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];  // 8 six-bit scales and 8 six-bit mins, see k_scale_min
  uint8_t qs[128];     // per 64 values: 32 bytes, low nibbles first, then high
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];      // bit 2k of qh[l] (k < 4): the 5th bit of value 64k + l, bit 2k+1 of 64k + 32 + l
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];    // the low 4 bits, per 128 values: 64 bytes, low nibbles then high
  uint8_t qh[64];     // the high 2 bits, per 128 values: 32 bytes, 4 values a byte
  int8_t scales[16];  // one per 16 values
  uint16_t d;
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// Sub-block j's (j < 8) 6-bit scale and min of a Q4_K or Q5_K block: the
// first four are the low 6 bits of bytes j and j + 4; the last four take
// their low 4 bits from byte j + 4 and their top 2 from the spare top bits
// of bytes j - 4 and j.
struct KScaleMin {
  uint8_t scale, min;
};
inline KScaleMin k_scale_min(const uint8_t* s, int j) {
  if (j < 4) return {static_cast<uint8_t>(s[j] & 63), static_cast<uint8_t>(s[j + 4] & 63)};
  return {static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4)),
          static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4))};
}

}  // namespace kvgate
