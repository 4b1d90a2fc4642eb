// Widening the block-quantized types (quant_blocks.h) to f32, bit for bit
// as llama.cpp's reference dequantization does it: the same products in
// the same order, so a weight kvgate reads is the weight llama.cpp reads.
// tests/engine/model/dequantize_test.cpp holds it to blocks llama.cpp
// quantized and dequantized (tests/models/make_quant_vectors.sh).
#pragma once

#include <cstdint>

#include "engine/model/tensor_type.h"

namespace kvgate {

// out[0:n] <- the n values of the blocks at src; n is a multiple of the
// type's block size and `type` is_block_quantized.
void dequantize_blocks(TensorType type, const void* src, float* out, int64_t n);

}  // namespace kvgate
