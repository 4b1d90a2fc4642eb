// Element types of GGUF tensors that kvgate can load, and their row layout.
//
// ggml stores quantized types in blocks along the innermost dimension (ne0),
// of 32 values (Q4_0 to Q8_0) or 256 (the k-quants); quant_blocks.h has
// their layouts. A row of ne0 values therefore needs ne0 to be a multiple
// of the block size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/model/quant_blocks.h"

namespace kvgate {

enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};

// Whether rows of `type` are runs of quant_blocks.h's blocks (every type but
// F32, F16 and BF16).
inline bool is_block_quantized(TensorType type) {
  return type != TensorType::F32 && type != TensorType::F16 && type != TensorType::BF16;
}

struct TensorTypeTraits {
  std::string_view name;
  int64_t block_elems;   // values per block
  int64_t block_bytes;   // bytes per block
};

// Traits of a ggml type id, or nullopt for a type kvgate cannot load.
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t ggml_type);
// A readable name for any ggml type id, supported or not ("Q4_K", "type 99").
std::string_view ggml_type_name(uint32_t ggml_type);

}  // namespace kvgate
