// Owners of a CUDA stream and of an event, for ordering work between the
// compute stream and the copy stream without synchronizing the host.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda_error.h"

namespace kvgate::cuda {

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }
  void synchronize(const char* what) const { check(cudaStreamSynchronize(s_), what); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming), "cudaEventCreate"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(e_); }
  // Work queued on `waiter` after this starts once everything queued on
  // `signaller` so far has finished.
  void order(cudaStream_t signaller, cudaStream_t waiter) {
    check(cudaEventRecord(e_, signaller), "cudaEventRecord");
    check(cudaStreamWaitEvent(waiter, e_, 0), "cudaStreamWaitEvent");
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace kvgate::cuda
