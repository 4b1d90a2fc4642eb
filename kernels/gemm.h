// The linear layers: y = x W^T for activation rows x and a weight matrix on
// the device in f32, f16 or bf16.
//
// F32 weights run as a pedantic f32 cublasGemmEx (no TF32), so the CUDA
// backend stays within 1e-4 of the CPU's sgemm. F16 and BF16 weights run
// through cuBLASLt on the tensor cores with f32 accumulation and f32 output
// (the residual stream stays f32; beta 1 adds into it). Their activations
// must be in the weights' type, since the tensor cores take both inputs in
// one: the kernels that produce a GEMM's input (rmsnorm, swiglu) write it in
// that type directly, and linear() narrows an f32 input itself otherwise.
//
// cuBLASLt's algorithm is chosen once per shape by its heuristic and kept,
// with a fixed workspace, so a step's GEMMs allocate nothing and can be
// captured in a CUDA graph.
//
// Thread ownership: one Gemm per backend, driven by its thread.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

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
  // values in w.type, contiguous; y rows are ldy floats apart. beta 1 adds
  // the product into y (the residual connections).
  void linear_typed(const DeviceMatrix& w, const void* x, int64_t n, float* y, int64_t ldy, float beta);

  // As linear_typed, for x in f32 whatever w's type: narrowed first when
  // w is f16 or bf16.
  void linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta);

  // Device memory the GEMMs read or write besides their operands; a graph
  // that captured them must be captured again when it changes.
  const void* narrowed() const { return narrowed_.as(); }

 private:
  // One cuBLASLt matmul shape: its descriptors and the algorithm chosen for
  // it, destroyed with the Gemm.
  struct LtPlan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    LtPlan() = default;
    LtPlan(const LtPlan&) = delete;
    LtPlan& operator=(const LtPlan&) = delete;
    ~LtPlan();
  };
  using ShapeKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, bool>;  // type, m, n, k, ldy, beta != 0
  const LtPlan& plan_for(const DeviceMatrix& w, int64_t n, int64_t ldy, bool accumulate);

  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;  // shared by cuBLAS and cuBLASLt: one stream runs one GEMM at a time
  DeviceBuffer narrowed_;   // x in f16 / bf16, for linear()
  std::map<ShapeKey, LtPlan> plans_;
};

// cuBLAS's status as kvgate::Error.
void check_cublas(cublasStatus_t s, const char* what);

}  // namespace kvgate::cuda
