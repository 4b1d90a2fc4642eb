// The linear layers through cuBLAS: y = x W^T for activation rows x (f32)
// and a weight matrix on the device in f32, f16 or bf16. F32 weights run
// as a pedantic f32 GEMM (no TF32), so the CUDA backend stays within 1e-4
// of the CPU's sgemm; f16 and bf16 weights run on the tensor cores with f32
// accumulation, the activations narrowed to the weights' type first (cuBLAS
// takes both inputs in one type), which is where their tolerance comes from.
//
// Thread ownership: one Gemm per backend, driven by its thread.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "engine/weights_view.h"
#include "kernels/device_buffer.h"

namespace kvgate::cuda {

// A weight matrix on the device, row-major [rows][cols], in `type` (F32,
// F16 or BF16). `data` is `storage`, or another matrix's storage when two
// share their bytes (a tied embedding and output head).
struct DeviceMatrix {
  WeightType type = WeightType::kF32;
  int64_t rows = 0, cols = 0;
  DeviceBuffer storage;
  const void* data = nullptr;
};

class Gemm {
 public:
  explicit Gemm(cudaStream_t stream);
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm();

  // y[t][0:w.rows] = beta * y[t] + x[t] W^T for t < n; x rows are w.cols
  // floats, contiguous; y rows are ldy floats apart. beta 1 adds the
  // product into y (the residual connections).
  void linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta);

 private:
  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer narrowed_;  // x in f16 / bf16
};

// cuBLAS's status as kvgate::Error.
void check_cublas(cublasStatus_t s, const char* what);

}  // namespace kvgate::cuda
