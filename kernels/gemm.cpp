#include "kernels/gemm.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <span>
#include <string>

#include "kernels/convert.h"
#include "kernels/q8_0_matvec.h"
#include "kernels/quant_matvec.h"
#include "kernels/widen_plan.h"

namespace kvgate::cuda {
namespace {

// What NVIDIA recommends for Hopper: enough for cuBLASLt's split-K and
// stream-K algorithms at every shape a step has.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

cudaDataType_t cuda_type(WeightType t) {
  switch (t) {
    case WeightType::kF16: return CUDA_R_16F;
    case WeightType::kBF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

}  // namespace

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(s));
}

Gemm::LtPlan::~LtPlan() {
  if (c) cublasLtMatrixLayoutDestroy(c);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (op) cublasLtMatmulDescDestroy(op);
}

Gemm::Gemm(cudaStream_t stream) : stream_(stream), workspace_(kWorkspaceBytes, "the GEMM workspace") {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
  // Our own workspace rather than cuBLAS's pool: graph capture must not
  // allocate.
  check_cublas(cublasSetWorkspace(handle_, workspace_.as(), workspace_.bytes()), "cublasSetWorkspace");
  check_cublas(cublasLtCreate(&lt_), "cublasLtCreate");
}

Gemm::~Gemm() {
  plans_.clear();
  if (lt_) cublasLtDestroy(lt_);
  if (handle_) cublasDestroy(handle_);
}

// Row-major Y[n][m] = X[n][k] W^T is column-major Y^T = W^T' X^T, where W's
// row-major bytes are the column-major k x m matrix W^T': so A = W with
// op T and lda = k, B = X^T (k x n, ldb = k), C = D = Y^T (m x n, ldc = ldy).
const Gemm::LtPlan& Gemm::plan_for(const DeviceMatrix& w, int64_t n, int64_t ldy, bool accumulate) {
  const ShapeKey key{static_cast<int>(w.type), w.rows, n, w.cols, ldy, accumulate};
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  LtPlan& p = plans_[key];
  try {
    const cudaDataType_t in = cuda_type(w.type);
    check_cublas(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
                 "cublasLtMatmulDescSetAttribute");
    check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb),
                 "cublasLtMatmulDescSetAttribute");
    check_cublas(cublasLtMatrixLayoutCreate(&p.a, in, static_cast<uint64_t>(w.cols), static_cast<uint64_t>(w.rows), w.cols),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(cublasLtMatrixLayoutCreate(&p.b, in, static_cast<uint64_t>(w.cols), static_cast<uint64_t>(n), w.cols),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, static_cast<uint64_t>(w.rows), static_cast<uint64_t>(n), ldy),
                 "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const size_t ws = workspace_.bytes();
    cublasLtMatmulHeuristicResult_t best{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(lt_, p.op, p.a, p.b, p.c, p.c, pref, 1, &best, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check_cublas(st, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0)
      throw Error("cuBLASLt has no algorithm for a " + std::to_string(n) + " x " + std::to_string(w.cols) + " x " +
                  std::to_string(w.rows) + " GEMM");
    p.algo = best.algo;
  } catch (...) {
    plans_.erase(key);
    throw;
  }
  return p;
}

WeightType Gemm::input_type(const DeviceMatrix& w) {
  return w.type == WeightType::kF16 || w.type == WeightType::kBF16 ? w.type : WeightType::kF32;
}

void Gemm::reserve(const DeviceMatrix& w) {
  if (is_block_type(w.type))
    ensure_bytes(widened_, static_cast<size_t>(std::min(w.rows, widen_chunk_rows(w.cols)) * w.cols) * sizeof(float),
                 "a block-quantized matrix widened to f32");
}

void Gemm::f32_gemm(const void* w, int64_t rows, int64_t cols, const void* x, int64_t n, float* y, int64_t ldy,
                    float beta) {
  const float alpha = 1.0f;
  check_cublas(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(n),
                            static_cast<int>(cols), &alpha, w, CUDA_R_32F, static_cast<int>(cols), x, CUDA_R_32F,
                            static_cast<int>(cols), &beta, y, CUDA_R_32F, static_cast<int>(ldy),
                            CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

// Up to kBlockPassedRows rows read the blocks in place, in mat-vec passes
// of up to 8 rows; more widen them first and take the F32 path. For Q8_0
// the widening costs about 9 bytes per weight (1.06 read and 4 written,
// then 4 read by the GEMM), a pass 1.06: at 64 rows eight passes cost what
// one widening does, and past that a prefill's rows share the widening.
// The 4- to 6-bit types read fewer bytes a pass (0.56 to 0.82), so their
// break-even is later (about 15 passes for Q4_K); they take the same 64
// until a device measures it. An x that is not 16-byte aligned (no caller
// in the backend: its buffers are cudaMalloc's) takes the widened path too.
// A matrix of parts in different types runs each part's passes into its
// rows of y, or widens each part into its rows of the scratch for one GEMM.
// The widening goes a chunk of rows at a time (widen_plan.h), so the
// scratch is at most 256 MiB whatever the matrix.
void Gemm::block_linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta) {
  const DeviceMatrix::Part whole[] = {{w.type, w.rows, w.row_bytes, w.data}};
  const std::span<const DeviceMatrix::Part> parts = w.parts.empty() ? std::span(whole) : std::span(w.parts);
  if (n <= kBlockPassedRows && quant_matvec_aligned(x)) {
    for (int64_t t = 0; t < n; t += kQuantMatvecMaxRows) {
      int64_t r0 = 0;
      for (const DeviceMatrix::Part& p : parts) {
        matvec_pass(p.type, p.data, p.row_bytes, p.rows, w.cols, x + t * w.cols, std::min(kQuantMatvecMaxRows, n - t),
                    y + t * ldy + r0, ldy, beta);
        r0 += p.rows;
      }
    }
    return;
  }
  reserve(w);
  int64_t run_rows[3];  // a fused matrix has at most three parts
  if (parts.size() > std::size(run_rows)) throw Error("gemm: a matrix of more than three runs of types");
  for (size_t i = 0; i < parts.size(); ++i) run_rows[i] = parts[i].rows;
  const auto pieces = widen_pieces(std::span(run_rows, parts.size()), widen_chunk_rows(w.cols));
  for (size_t i = 0; i < pieces.size(); ++i) {
    const WidenPiece& p = pieces[i];
    const DeviceMatrix::Part& run = parts[p.run];
    widen_rows(run.type, static_cast<const std::byte*>(run.data) + static_cast<size_t>(p.first) * run.row_bytes,
               run.row_bytes, p.rows, w.cols, widened_.as<float>() + p.scratch_row * w.cols, stream_);
    // The chunk's last piece: its rows are all widened; multiply them into
    // their columns of y.
    if (i + 1 == pieces.size() || pieces[i + 1].chunk != p.chunk)
      f32_gemm(widened_.as(), p.chunk_rows, w.cols, x, n, y + p.chunk_first, ldy, beta);
  }
}

// Q8_0 runs its own staged kernel, the other block types quant_matvec.
void Gemm::matvec_pass(WeightType type, const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x,
                       int64_t n, float* y, int64_t ldy, float beta) {
  static_assert(kQ8_0MatvecMaxRows == kQuantMatvecMaxRows);
  if (type == WeightType::kQ8_0)
    q8_0_matvec(w, row_bytes, rows, cols, x, n, y, ldy, beta, stream_);
  else
    quant_matvec(type, w, row_bytes, rows, cols, x, n, y, ldy, beta, stream_);
}

void Gemm::linear_typed(const DeviceMatrix& w, const void* x, int64_t n, float* y, int64_t ldy, float beta) {
  if (n == 0) return;
  if (w.type == WeightType::kF32) return f32_gemm(w.data, w.rows, w.cols, x, n, y, ldy, beta);
  if (is_block_type(w.type)) return block_linear(w, static_cast<const float*>(x), n, y, ldy, beta);
  const float alpha = 1.0f;
  const LtPlan& p = plan_for(w, n, ldy, beta != 0.0f);
  check_cublas(cublasLtMatmul(lt_, p.op, &alpha, w.data, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo,
                              workspace_.as(), workspace_.bytes(), stream_),
               "cublasLtMatmul");
}

void Gemm::linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta) {
  if (n == 0) return;
  if (input_type(w) == WeightType::kF32) return linear_typed(w, x, n, y, ldy, beta);
  const int64_t elems = n * w.cols;
  ensure_bytes(narrowed_, static_cast<size_t>(elems) * 2, "narrowed activations");
  narrow_f32(x, elems, w.type, narrowed_.as(), stream_);
  linear_typed(w, narrowed_.as(), n, y, ldy, beta);
}

}  // namespace kvgate::cuda
