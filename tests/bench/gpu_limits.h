// The GPU's own limits, measured in the same run as kvgate_gpu_bench, so
// that its figures read as fractions of what this device does: decode
// against the device-memory copy bandwidth, prefill against cuBLAS on the
// same GEMMs. Written with the CUDA runtime and cuBLAS directly (nothing of
// kernels/), timed with CUDA events; every call allocates and frees its own
// buffers, so run them before the backend takes the device's memory. Any
// CUDA or cuBLAS failure is a kvgate::Error naming the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kvgate {

// Device 0, as cudaGetDeviceProperties names it.
struct GpuDevice {
  std::string name;
  int sms = 0, major = 0, minor = 0;
  size_t memory_bytes = 0;
  int runtime_version = 0, driver_version = 0;  // 13000 = 13.0
};
GpuDevice describe_gpu();

// cudaMemcpyAsync device to device of `bytes`, best of `reps` after one
// untimed copy: bytes read plus bytes written per second (2 x bytes / s),
// STREAM's convention. GB = 1e9.
double measure_d2d_copy_gbps(size_t bytes, int reps);

// One linear layer as the CUDA backend runs it (kernels/gemm.cpp):
// y[T][rows] = beta * y + x[T][cols] W^T, W row-major [rows][cols].
struct GemmShape {
  int64_t rows = 0, cols = 0;
  float beta = 0;  // 1 where the backend adds into the residual stream
};

// cuBLAS alone: cublasGemmEx with BF16 x and W, F32 compute
// (CUBLAS_COMPUTE_32F) and F32 y, the backend's operand order, for
// `tokens` rows; `shapes` run in order `repeat` times per timed pass (one
// layer's GEMMs x the layer count), best of `passes` after one untimed
// pass. Inputs are random BF16 in [-1, 1). TFLOP/s, 2 FLOPs per
// multiply-add.
double measure_bf16_gemm_tflops(int64_t tokens, std::span<const GemmShape> shapes, int repeat, int passes);

}  // namespace kvgate
