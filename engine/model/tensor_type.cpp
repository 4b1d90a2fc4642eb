#include "engine/model/tensor_type.h"

#include <string>

namespace kvgate {

std::optional<TensorTypeTraits> tensor_type_traits(uint32_t ggml_type) {
  switch (static_cast<TensorType>(ggml_type)) {
    case TensorType::F32: return TensorTypeTraits{"F32", 1, 4};
    case TensorType::F16: return TensorTypeTraits{"F16", 1, 2};
    case TensorType::BF16: return TensorTypeTraits{"BF16", 1, 2};
    case TensorType::Q4_0: return TensorTypeTraits{"Q4_0", kQBlock, sizeof(BlockQ4_0)};
    case TensorType::Q4_1: return TensorTypeTraits{"Q4_1", kQBlock, sizeof(BlockQ4_1)};
    case TensorType::Q5_0: return TensorTypeTraits{"Q5_0", kQBlock, sizeof(BlockQ5_0)};
    case TensorType::Q5_1: return TensorTypeTraits{"Q5_1", kQBlock, sizeof(BlockQ5_1)};
    case TensorType::Q8_0: return TensorTypeTraits{"Q8_0", kQBlock, sizeof(BlockQ8_0)};
    case TensorType::Q4_K: return TensorTypeTraits{"Q4_K", kQKBlock, sizeof(BlockQ4_K)};
    case TensorType::Q5_K: return TensorTypeTraits{"Q5_K", kQKBlock, sizeof(BlockQ5_K)};
    case TensorType::Q6_K: return TensorTypeTraits{"Q6_K", kQKBlock, sizeof(BlockQ6_K)};
  }
  return std::nullopt;
}

std::string_view ggml_type_name(uint32_t t) {
  // ggml's type ids, so an unsupported model names its type plainly.
  static constexpr std::string_view names[] = {
      "F32", "F16", "Q4_0", "Q4_1", "type 4", "type 5", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
      "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS",
      "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64",
      "IQ1_M", "BF16"};
  if (t < std::size(names)) return names[t];
  return "an unknown type id";
}

}  // namespace kvgate
