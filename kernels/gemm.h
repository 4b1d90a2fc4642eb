// The linear layers: y = x W^T for activation rows x and a weight matrix on
// the device in f32, f16, bf16 or a block type (Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q4_K, Q5_K, Q6_K).
//
// F32 weights run as a pedantic f32 cublasGemmEx (no TF32), so the CUDA
// backend stays within 1e-4 of the CPU's sgemm. F16 and BF16 weights run
// through cuBLASLt on the tensor cores with f32 accumulation and f32 output
// (the residual stream stays f32; beta 1 adds into it). Their activations
// must be in the weights' type, since the tensor cores take both inputs in
// one: the kernels that produce a GEMM's input (rmsnorm, swiglu) write it in
// input_type() directly, and linear() narrows an f32 input itself otherwise.
//
// Block-quantized weights stay in their blocks (Q8_0: 34 bytes per 32
// weights; Q4_K: 144 per 256), with f32 activations. Up to
// kBlockPassedRows rows (decode) go through a fused dequantize-matvec that
// reads each weight block once for up to 8 of them, in as many passes as
// that takes: q8_0_matvec.h for Q8_0, quant_matvec.h for the others. More
// rows (prefill) are compute-bound: the matrix is widened into an f32
// scratch (the host's dequantization, bit for bit), a chunk of rows at a
// time (widen_plan.h), for the pedantic cuBLAS GEMM of F32 weights, the
// same call on the same f32 weights as when the matrices were kept widened
// on the device.
//
// cuBLASLt's algorithm is chosen once per shape by its heuristic and kept,
// with a fixed workspace, and the widening scratch is sized up front
// (reserve()), so a step's GEMMs allocate nothing and can be captured in a
// CUDA graph.
//
// Thread ownership: one Gemm per backend, driven by its thread.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "engine/weights_view.h"
#include "kernels/device_buffer.h"

namespace kvgate::cuda {

// A weight matrix on the device, row-major [rows][cols], in `type` (F32,
// F16, BF16 or a block type), rows `row_bytes` apart (read for the block
// types only: the others are dense). `data` is `storage`, or another matrix's storage when
// two share their bytes (a tied embedding and output head).
//
// A fused matrix whose parts are block types that differ (a Q4_K_M file's
// Q4_K Wq and Wk beside a Q6_K Wv) keeps each part in its own blocks
// rather than widening them all to f32: `parts` then lists them in row
// order, each dense, and `type`, `row_bytes` and `data` are the first's.
// Empty when every row is in `type`.
struct DeviceMatrix {
  struct Part {
    WeightType type;
    int64_t rows;
    size_t row_bytes;
    const void* data;
  };
  WeightType type = WeightType::kF32;
  int64_t rows = 0, cols = 0;
  size_t row_bytes = 0;
  DeviceBuffer storage;
  const void* data = nullptr;
  std::vector<Part> parts;
};

// The most rows a block-quantized GEMM takes as mat-vec passes before it
// widens the matrix instead: for Q8_0 eight passes read what one widening
// moves (gemm.cpp).
inline constexpr int64_t kBlockPassedRows = 64;

class Gemm {
 public:
  explicit Gemm(cudaStream_t stream);
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm();

  // The type linear_typed reads w's activations in: the weights' own for
  // f16 and bf16 (the tensor cores take both inputs in one type), f32 for
  // f32 and the block types. The kernels that produce a GEMM's input write this type.
  static WeightType input_type(const DeviceMatrix& w);

  // y[t][0:w.rows] = beta * y[t] + x[t] W^T for t < n; x rows are w.cols
  // values in input_type(w), contiguous; y rows are ldy floats apart. beta 1
  // adds the product into y (the residual connections).
  void linear_typed(const DeviceMatrix& w, const void* x, int64_t n, float* y, int64_t ldy, float beta);

  // As linear_typed, for x in f32 whatever w's type: narrowed first when
  // w is f16 or bf16.
  void linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta);

  // Sizes the scratch that more than kBlockPassedRows rows against `w`
  // need (a block-quantized matrix widened to f32 a chunk of rows at a
  // time, at most kWidenScratchBytes; nothing for the others), so that a
  // caller can allocate it before it measures free memory, and before any
  // step is captured in a CUDA graph (capture must not allocate). Without
  // it, the first such GEMM allocates.
  void reserve(const DeviceMatrix& w);

  // Device memory the GEMMs read or write besides their operands; a graph
  // that captured them must be captured again when any of it moves.
  std::array<const void*, 3> scratch() const { return {workspace_.as(), narrowed_.as(), widened_.as()}; }

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
  // y = beta y + x W^T for row-major f32 W [rows][cols]: pedantic cuBLAS.
  void f32_gemm(const void* w, int64_t rows, int64_t cols, const void* x, int64_t n, float* y, int64_t ldy,
                float beta);
  void block_linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta);
  // Up to 8 rows of x against `rows` rows of one block type, into y.
  void matvec_pass(WeightType type, const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x,
                   int64_t n, float* y, int64_t ldy, float beta);

  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;  // shared by cuBLAS and cuBLASLt: one stream runs one GEMM at a time
  DeviceBuffer narrowed_;   // x in f16 / bf16, for linear()
  DeviceBuffer widened_;    // rows of a block-quantized matrix in f32, for more than kBlockPassedRows rows
  std::map<ShapeKey, LtPlan> plans_;
};

// cuBLAS's status as kvgate::Error.
void check_cublas(cublasStatus_t s, const char* what);

}  // namespace kvgate::cuda
