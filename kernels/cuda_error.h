// CUDA and cuBLAS failures as kvgate::Error: every runtime call, every
// kernel launch and every library call in kernels/ goes through one of these,
// so a missing device, an exhausted pool or a faulting kernel reaches the
// caller as a message naming what was being done, never as a crash.
//
// A fault inside a kernel (an illegal address, say) is "sticky": the CUDA
// context is unusable afterwards and every later call fails too. CudaError
// says which kind it was, so the backend can refuse all later work with the
// first cause instead of a stream of secondary errors.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/error.h"

namespace kvgate::cuda {

class CudaError : public Error {
 public:
  CudaError(cudaError_t code, const std::string& what) : Error(what), code_(code) {}
  cudaError_t code() const { return code_; }
  // Out of memory is the one failure the device recovers from: the caller
  // can free something, or ask for less, and go on.
  bool recoverable() const { return code_ == cudaErrorMemoryAllocation; }

 private:
  cudaError_t code_;
};

inline void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error, so the next call does not report it again
  throw CudaError(e, std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e) + " (" +
                         cudaGetErrorName(e) + ")");
}

// After a <<<...>>> launch: a bad configuration shows up here at once, a
// fault inside the kernel at the next synchronizing call.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace kvgate::cuda
