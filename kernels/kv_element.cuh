// Device-side: the K/V element types as float in registers, and the host's
// dispatch from KvType to them. Conversions round to nearest even, as the
// CPU's f32_to_f16 / f32_to_bf16 do, so a value stored here has the same
// bits as one the host narrowed.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "engine/kv_layout.h"

namespace kvgate::cuda {

__device__ __forceinline__ float kv_to_float(float x) { return x; }
__device__ __forceinline__ float kv_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float kv_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T kv_from_float(float x);
template <>
__device__ __forceinline__ float kv_from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half kv_from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 kv_from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Calls f(T{}) with T the element type of `t`.
template <typename F>
void dispatch_kv_type(KvType t, F&& f) {
  switch (t) {
    case KvType::kF32: f(float{}); return;
    case KvType::kF16: f(__half{}); return;
    case KvType::kBF16: f(__nv_bfloat16{}); return;
  }
}

}  // namespace kvgate::cuda
