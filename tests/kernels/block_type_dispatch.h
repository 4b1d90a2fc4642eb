// The host tests of the CUDA block decoders call code templated on the
// WeightType; this turns a runtime TensorType into that template argument.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "engine/model/tensor_type.h"
#include "engine/weights_view.h"

namespace kvgate::cuda_testing {

// Calls f(std::integral_constant<WeightType, t>) for block type t; a test
// failure for any other type.
template <typename F>
void with_block_type(TensorType t, F&& f) {
  using W = WeightType;
  switch (t) {
    case TensorType::Q4_0: return f(std::integral_constant<W, W::kQ4_0>{});
    case TensorType::Q4_1: return f(std::integral_constant<W, W::kQ4_1>{});
    case TensorType::Q5_0: return f(std::integral_constant<W, W::kQ5_0>{});
    case TensorType::Q5_1: return f(std::integral_constant<W, W::kQ5_1>{});
    case TensorType::Q8_0: return f(std::integral_constant<W, W::kQ8_0>{});
    case TensorType::Q4_K: return f(std::integral_constant<W, W::kQ4_K>{});
    case TensorType::Q5_K: return f(std::integral_constant<W, W::kQ5_K>{});
    case TensorType::Q6_K: return f(std::integral_constant<W, W::kQ6_K>{});
    default: FAIL() << ggml_type_name(static_cast<uint32_t>(t)) << " is not a block type";
  }
}

}  // namespace kvgate::cuda_testing
