// Device-side: writing an activation in the type the next GEMM reads (f32,
// or the f16 / bf16 of its weights, rounded to nearest even as narrow_f32
// rounds), and the host's dispatch from WeightType to that type. Kernels
// that produce a GEMM's input write it this way, saving the GEMM a pass
// that narrows it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "base/error.h"
#include "engine/weights_view.h"

namespace kvgate::cuda {

__device__ __forceinline__ void store_activation(float* p, float x) { *p = x; }
__device__ __forceinline__ void store_activation(__half* p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void store_activation(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

// Calls f(T{}) with T the activation type for `t`: float, __half or
// __nv_bfloat16. Other types (the block types) are not activation types.
template <typename F>
void dispatch_activation_type(WeightType t, const char* who, F&& f) {
  switch (t) {
    case WeightType::kF32: f(float{}); return;
    case WeightType::kF16: f(__half{}); return;
    case WeightType::kBF16: f(__nv_bfloat16{}); return;
    default: throw Error(std::string(who) + ": activations are f32, f16 or bf16");
  }
}

}  // namespace kvgate::cuda
