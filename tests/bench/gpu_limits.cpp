#include "tests/bench/gpu_limits.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"

namespace kvgate {
namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call does not report it again
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(s));
}

class DeviceBytes {
 public:
  DeviceBytes(size_t bytes, const char* what) { check(cudaMalloc(&p_, bytes), what); }
  ~DeviceBytes() { cudaFree(p_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Cublas {
 public:
  explicit Cublas(cudaStream_t s) {
    check(cublasCreate(&h_), "cublasCreate");
    check(cublasSetStream(h_, s), "cublasSetStream");
  }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// The device time of what `queue` puts on the stream, between two events,
// best of `passes` after one untimed pass (cuBLAS's heuristics and lazily
// loaded kernels pay on first use).
template <typename F>
double best_device_seconds(cudaStream_t stream, int passes, F&& queue) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  const cudaError_t e = cudaEventCreate(&stop);
  if (e != cudaSuccess) cudaEventDestroy(start);
  check(e, "cudaEventCreate");
  double best = std::numeric_limits<double>::infinity();
  try {
    queue();
    for (int p = 0; p < passes; ++p) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      queue();
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      best = std::min(best, ms * 1e-3);
    }
  } catch (...) {
    cudaEventDestroy(start), cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start), cudaEventDestroy(stop);
  return best;
}

// Random BF16 rather than a constant: tensor cores draw less power (and
// clock higher) on data whose bits do not toggle, which would flatter the
// ceiling. An 8 MiB host pattern, tiled.
void fill_random_bf16(void* dst, size_t elems) {
  std::vector<uint16_t> pattern(size_t{1} << 22);
  std::mt19937 rng(15);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (uint16_t& v : pattern) {
    const float f = u(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    v = static_cast<uint16_t>(bits >> 16);  // BF16 is the top half of an f32
  }
  auto* out = static_cast<uint16_t*>(dst);
  for (size_t done = 0; done < elems; done += pattern.size()) {
    const size_t n = std::min(pattern.size(), elems - done);
    check(cudaMemcpy(out + done, pattern.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice), "fill (cudaMemcpy)");
  }
}

}  // namespace

GpuDevice describe_gpu() {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  GpuDevice d{p.name, p.multiProcessorCount, p.major, p.minor, p.totalGlobalMem};
  check(cudaRuntimeGetVersion(&d.runtime_version), "cudaRuntimeGetVersion");
  check(cudaDriverGetVersion(&d.driver_version), "cudaDriverGetVersion");
  return d;
}

double measure_d2d_copy_gbps(size_t bytes, int reps) {
  DeviceBytes src(bytes, "cudaMalloc (copy source)"), dst(bytes, "cudaMalloc (copy destination)");
  Stream stream;
  check(cudaMemsetAsync(src.get(), 1, bytes, stream.get()), "cudaMemsetAsync");
  const double s = best_device_seconds(stream.get(), reps, [&] {
    check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()), "cudaMemcpyAsync");
  });
  return 2.0 * static_cast<double>(bytes) / s / 1e9;
}

double measure_bf16_gemm_tflops(int64_t tokens, std::span<const GemmShape> shapes, int repeat, int passes) {
  int64_t x_elems = 0, w_elems = 0, y_elems = 0;
  double flops = 0;
  for (const GemmShape& g : shapes) {
    x_elems = std::max(x_elems, tokens * g.cols);
    w_elems = std::max(w_elems, g.rows * g.cols);
    y_elems = std::max(y_elems, tokens * g.rows);
    flops += 2.0 * static_cast<double>(tokens) * static_cast<double>(g.rows) * static_cast<double>(g.cols);
  }
  DeviceBytes x(static_cast<size_t>(x_elems) * 2, "cudaMalloc (GEMM x)");
  DeviceBytes w(static_cast<size_t>(w_elems) * 2, "cudaMalloc (GEMM W)");
  DeviceBytes y(static_cast<size_t>(y_elems) * 4, "cudaMalloc (GEMM y)");
  fill_random_bf16(x.get(), static_cast<size_t>(x_elems));
  fill_random_bf16(w.get(), static_cast<size_t>(w_elems));
  check(cudaMemset(y.get(), 0, static_cast<size_t>(y_elems) * 4), "cudaMemset");
  // The fills ran on the legacy default stream, which a non-blocking
  // stream does not wait for.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after the fills)");
  Stream stream;
  Cublas blas(stream.get());
  const float alpha = 1.0f;
  // The backend's operand order (kernels/gemm.cpp): column-major Y^T = op_T(W) X^T.
  const auto queue = [&] {
    for (int r = 0; r < repeat; ++r)
      for (const GemmShape& g : shapes)
        check(cublasGemmEx(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(g.rows), static_cast<int>(tokens),
                           static_cast<int>(g.cols), &alpha, w.get(), CUDA_R_16BF, static_cast<int>(g.cols), x.get(),
                           CUDA_R_16BF, static_cast<int>(g.cols), &g.beta, y.get(), CUDA_R_32F,
                           static_cast<int>(g.rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
  };
  const double s = best_device_seconds(stream.get(), passes, queue);
  return flops * repeat / s / 1e12;
}

}  // namespace kvgate
