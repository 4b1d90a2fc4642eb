// Element types of GGUF tensors that kvgate can load, and their row layout.
//
// ggml stores quantized types in blocks along the innermost dimension (ne0):
// Q8_0 packs 32 values as one f16 scale and 32 int8s (34 bytes). A row of
// ne0 values therefore needs ne0 to be a multiple of the block size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvgate {

enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q8_0 = 8,
  BF16 = 30,
};

struct TensorTypeTraits {
  std::string_view name;
  int64_t block_elems;   // values per block
  int64_t block_bytes;   // bytes per block
};

// Traits of a ggml type id, or nullopt for a type kvgate cannot load.
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t ggml_type);
// A readable name for any ggml type id, supported or not ("Q4_K", "type 99").
std::string_view ggml_type_name(uint32_t ggml_type);

inline constexpr int64_t kQ8_0Block = 32;
struct BlockQ8_0 {
  uint16_t scale_f16;
  int8_t q[kQ8_0Block];
};
static_assert(sizeof(BlockQ8_0) == 34);

}  // namespace kvgate
