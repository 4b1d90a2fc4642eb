// kvgate's own quantizer for the block types (quant_blocks.h): what
// `kvgate mkmodel --type` writes. Not llama-quantize's search for the best
// scales (make_qkx2_quants and friends): a plain min/max fit per block and
// sub-block, which is enough for random-weight test models and writes
// blocks any GGUF reader decodes. Real models come quantized by their
// publishers.
#pragma once

#include <cstdint>

#include "engine/model/tensor_type.h"

namespace kvgate {

// dst <- the n values of src as `type`'s blocks; n is a multiple of the
// type's block size and `type` is_block_quantized.
void quantize_blocks(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace kvgate
