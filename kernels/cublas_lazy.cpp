// cuBLAS and cuBLASLt, loaded on first use rather than at process start.
//
// libcublasLt is over 500 MB with about 400,000 relocations; linked the
// ordinary way, every kvgate process mapped and relocated it before main,
// whether or not it ever touched a GPU: `kvgate --version` took 0.09 s of
// CPU and 26,000 page faults (0.3 s wall on an idle 2-core VM) against
// 0.01 s without it, and the Release test run starts kvgate hundreds of
// times (the CLI suites, the e2e tests). Here the kernels' calls (gemm.cpp)
// land on these definitions instead, each of which resolves the real
// function in libcublas / libcublasLt once, on the first call: only a
// process that builds a CUDA backend ever loads the libraries.
//
// Each definition must match its declaration in cublas_api.h / cublasLt.h
// (both extern "C": a differing parameter list is a compile error, not a
// silent overload). A function the kernels start to call that is missing
// here fails to link (kvgate_cuda no longer links libcublas), so none can be
// forgotten. The libraries are found as the dynamic linker would have found
// them: by soname (LD_LIBRARY_PATH, which ops/gpu-check sets, and ld.so's
// cache), then in the toolkit the build used (KVGATE_CUDA_LIB_DIR).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

#include "base/error.h"

namespace kvgate::cuda {
namespace {

#define KVGATE_STR2(x) #x
#define KVGATE_STR(x) KVGATE_STR2(x)

void* open_library(const char* name) {
  if (void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL)) return h;
  const std::string first = dlerror();
  const std::string in_toolkit = std::string(KVGATE_CUDA_LIB_DIR) + "/" + name;
  if (void* h = dlopen(in_toolkit.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
  throw Error(std::string("the CUDA backend cannot load ") + name + ": " + first + "; " + dlerror());
}

// cuBLASLt first: libcublas needs it, and finds it loaded.
void* cublas_lt_library() {
  static void* const h = open_library("libcublasLt.so." KVGATE_STR(KVGATE_CUBLAS_MAJOR));
  return h;
}

void* cublas_library() {
  static void* const h = (cublas_lt_library(), open_library("libcublas.so." KVGATE_STR(KVGATE_CUBLAS_MAJOR)));
  return h;
}

void* resolve(void* library, const char* name) {
  void* f = dlsym(library, name);
  if (!f) throw Error(std::string("the CUDA backend cannot find ") + name + " in cuBLAS: " + dlerror());
  return f;
}

}  // namespace
}  // namespace kvgate::cuda

// name's real definition in library (cublas_library or cublas_lt_library),
// looked up once; the call forwards the arguments unchanged.
// (The pointer's type is spelled from params, not decltype(&name):
// cublasGemmEx has a C++ overload in cublas_api.h.)
#define KVGATE_LAZY(library, name, params, args)                                             \
  cublasStatus_t name params {                                                               \
    using Real = cublasStatus_t(*) params;                                                   \
    static const auto real = reinterpret_cast<Real>(kvgate::cuda::resolve(library(), #name)); \
    return real args;                                                                        \
  }

using kvgate::cuda::cublas_library;
using kvgate::cuda::cublas_lt_library;

extern "C" {

KVGATE_LAZY(cublas_library, cublasCreate_v2, (cublasHandle_t* handle), (handle))
KVGATE_LAZY(cublas_library, cublasDestroy_v2, (cublasHandle_t handle), (handle))
KVGATE_LAZY(cublas_library, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
KVGATE_LAZY(cublas_library, cublasSetWorkspace_v2, (cublasHandle_t handle, void* workspace, size_t bytes),
            (handle, workspace, bytes))
KVGATE_LAZY(cublas_library, cublasGemmEx,
            (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
             const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype,
             int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
             cublasGemmAlgo_t algo),
            (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType,
             algo))

// Not a status: what a status means. Called only with an error in hand, so
// the library is already loaded (cublasCreate came first).
const char* cublasGetStatusString(cublasStatus_t status) {
  static const auto real = reinterpret_cast<decltype(&cublasGetStatusString)>(
      kvgate::cuda::resolve(cublas_library(), "cublasGetStatusString"));
  return real(status);
}

KVGATE_LAZY(cublas_lt_library, cublasLtCreate, (cublasLtHandle_t* handle), (handle))
KVGATE_LAZY(cublas_lt_library, cublasLtDestroy, (cublasLtHandle_t handle), (handle))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmul,
            (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
             cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
             const void* C, cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
             const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream),
            (handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes,
             stream))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulAlgoGetHeuristic,
            (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
             cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
             cublasLtMatmulPreference_t preference, int requestedAlgoCount,
             cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount),
            (handle, desc, Adesc, Bdesc, Cdesc, Ddesc, preference, requestedAlgoCount, heuristicResultsArray,
             returnAlgoCount))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulDescCreate,
            (cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType, cudaDataType_t scaleType),
            (desc, computeType, scaleType))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulDescSetAttribute,
            (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t sizeInBytes),
            (desc, attr, buf, sizeInBytes))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t* pref), (pref))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
KVGATE_LAZY(cublas_lt_library, cublasLtMatmulPreferenceSetAttribute,
            (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
             size_t sizeInBytes),
            (pref, attr, buf, sizeInBytes))
KVGATE_LAZY(cublas_lt_library, cublasLtMatrixLayoutCreate,
            (cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
            (layout, type, rows, cols, ld))
KVGATE_LAZY(cublas_lt_library, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))

}  // extern "C"
