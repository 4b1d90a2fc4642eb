// Owners of device memory and of pinned (page-locked) host memory: freed
// when they go out of scope, moved but never copied. Pinned memory is what
// lets cudaMemcpyAsync run truly asynchronously (a pageable buffer makes
// the copy go through a driver staging buffer, synchronously).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "kernels/cuda_error.h"

namespace kvgate::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // `what` names the allocation in the error when the device is out of memory.
  DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      size_t free = 0, total = 0;
      cudaGetLastError();
      cudaMemGetInfo(&free, &total);
      check(e, (std::string("cudaMalloc of ") + std::to_string(bytes >> 20) + " MiB for " + what + " (" +
                std::to_string(free >> 20) + " MiB free of " + std::to_string(total >> 20) + ")")
                   .c_str());
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  template <typename T = void>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  // cudaFree's status is ignored: after a device fault it fails, and a
  // destructor has no one to tell.
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes == 0) return;
    check(cudaMallocHost(&ptr_, bytes), (std::string("cudaMallocHost for ") + what).c_str());
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  template <typename T = void>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void release() {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Grows `buf` to at least `bytes` (contents not kept): per-step scratch whose
// size depends on the step's token count.
inline void ensure_bytes(DeviceBuffer& buf, size_t bytes, const char* what) {
  if (buf.bytes() < bytes) {
    buf = DeviceBuffer();  // free first, so the old and new never both hold memory
    buf = DeviceBuffer(bytes, what);
  }
}
inline void ensure_bytes(PinnedBuffer& buf, size_t bytes, const char* what) {
  if (buf.bytes() < bytes) {
    buf = PinnedBuffer();
    buf = PinnedBuffer(bytes, what);
  }
}

}  // namespace kvgate::cuda
