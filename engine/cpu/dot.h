// Dot products of one stored weight row (F32, F16, BF16, Q8_0) with f32
// activations: the inner loop of decode, which is bound by how fast weights
// stream from memory. AVX2 + FMA + F16C (the x86-64-v3 baseline).
#pragma once

#include <cstdint>

#include "engine/model/tensor_type.h"

namespace kvgate {

float dot_f32(const float* w, const float* x, int64_t n);

// One weight row against one activation row, the row stored as `type`.
float dot_row(TensorType type, const void* w, const float* x, int64_t n);

}  // namespace kvgate
