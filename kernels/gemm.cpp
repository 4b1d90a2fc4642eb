#include "kernels/gemm.h"

#include <string>

#include "kernels/convert.h"

namespace kvgate::cuda {

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(s));
}

Gemm::Gemm(cudaStream_t stream) : stream_(stream) {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  check_cublas(cublasSetStream(handle_, stream_), "cublasSetStream");
}

Gemm::~Gemm() {
  if (handle_) cublasDestroy(handle_);
}

void Gemm::linear(const DeviceMatrix& w, const float* x, int64_t n, float* y, int64_t ldy, float beta) {
  if (n == 0) return;
  const void* b = x;
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F_PEDANTIC;
  if (w.type != WeightType::kF32) {
    const int64_t elems = n * w.cols;
    ensure_bytes(narrowed_, static_cast<size_t>(elems) * 2, "narrowed activations");
    narrow_f32(x, elems, w.type, narrowed_.as(), stream_);
    b = narrowed_.as();
    type = w.type == WeightType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
    compute = CUBLAS_COMPUTE_32F;
  }
  // Row-major Y[n][rows] = X[n][cols] W^T is column-major Y^T = W^T' X^T,
  // where W's row-major bytes are the column-major cols x rows matrix W^T':
  // so op(A) = T on W with lda = cols, B = X^T with ldb = cols.
  const float alpha = 1.0f;
  check_cublas(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(w.rows), static_cast<int>(n),
                            static_cast<int>(w.cols), &alpha, w.data, type, static_cast<int>(w.cols), b, type,
                            static_cast<int>(w.cols), &beta, y, CUDA_R_32F, static_cast<int>(ldy), compute,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace kvgate::cuda
