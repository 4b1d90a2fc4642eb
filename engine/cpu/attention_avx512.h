// The AVX-512 pieces of attention (attention.h), in their own translation
// unit built with -mavx512*: call them only where cpu_has_avx512().
#pragma once

#include <cstdint>

namespace kvgate {

// s[p] <- exp(s[p] - max s) for p < n (n >= 1), and returns their sum: a
// softmax's numerators, each bit-identical to exp_nonpositive1 of the same
// difference (exp_nonpositive.h), sixteen lanes at a time.
float exp_shifted_avx512(float* s, int32_t n);

}  // namespace kvgate
