#include "tests/bench/machine_limits.h"

#include "engine/cpu/cpu_features.h"

#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

namespace kvgate {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kBigFloats = int64_t{256} << 20 >> 2;  // 256 MiB of floats
// Other processes share the cores: the best of many short runs is the
// figure least disturbed by them.
constexpr int kBandwidthReps = 20;  // ~10-30 ms each
constexpr int kGemmReps = 10;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using FloatBuffer = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned and first touched by the threads that will use it, so the
// pages sit where those threads run (matters on multi-socket machines).
FloatBuffer big_array(int64_t n, float value) {
  auto* p = static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(n) * sizeof(float)));
  if (!p) throw std::bad_alloc();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) p[i] = value;
  return FloatBuffer(p);
}

template <typename F>
double best_seconds(int reps, F&& run) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// Results land here so that the compiler cannot drop the loops that make them.
volatile float g_sink;

}  // namespace

double measure_copy_bandwidth_gbps() {
  const int64_t n = kBigFloats;
  FloatBuffer a = big_array(n, 0.0f), b = big_array(n, 1.0f);
  float* __restrict dst = a.get();
  const float* __restrict src = b.get();
  const double t = best_seconds(kBandwidthReps, [&] {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  });
  g_sink = dst[n / 2];
  return 2.0 * static_cast<double>(n) * sizeof(float) / t / 1e9;
}

double measure_read_bandwidth_gbps() {
  const int64_t n = kBigFloats;  // a multiple of 32
  FloatBuffer a = big_array(n, 1.0f);
  const float* x = a.get();
  float total = 0;
  const double t = best_seconds(kBandwidthReps, [&] {
    float sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
      // Four independent accumulators, so add latency never limits the read.
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; i += 32)
        for (int j = 0; j < 4; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_load_ps(x + i + 8 * j));
      float lanes[8];
      _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
      for (float v : lanes) sum += v;
    }
    total = sum;
  });
  g_sink = total;
  return static_cast<double>(n) * sizeof(float) / t / 1e9;
}

double measure_sgemm_gflops(int m, int n, int k) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("measure_sgemm_gflops: shape must be positive");
  const auto size = [](int r, int c) { return static_cast<int64_t>(r) * c; };
  FloatBuffer a = big_array(size(m, k), 0.5f), b = big_array(size(n, k), 0.25f), c = big_array(size(m, n), 0.0f);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.get(), k, b.get(), k, 0.0f, c.get(), n);
  };
  run();  // warm up: OpenBLAS's buffers and thread pool
  // Small shapes take microseconds: repeat them until the best is a stable
  // figure (at least kGemmReps runs and about 0.2 s in all).
  const auto t0 = Clock::now();
  double best = 1e30;
  for (int r = 0; r < kGemmReps || (std::chrono::duration<double>(Clock::now() - t0).count() < 0.2 && r < 100000); ++r)
    best = std::min(best, best_seconds(1, run));
  g_sink = c[0];
  return 2.0 * m * static_cast<double>(n) * k / best / 1e9;
}

double measure_sgemm_peak_gflops() {
  // The best of three square sizes: 2048^3 alone runs long enough that a
  // busy neighbour core drags every repetition, and a smaller cache-friendly
  // shape can then beat "peak", which would make ratios against it above 1.
  double best = 0;
  for (int n : {512, 1024, 2048}) best = std::max(best, measure_sgemm_gflops(n, n, n));
  return best;
}

namespace {

// 12 independent accumulators, named so that they stay in registers (an
// array is kept on the stack, and its loads and stores then bound the
// loop): enough FMAs in flight to cover 2 pipes x 4 cycles of latency. The
// asm keeps the compiler from merging or hoisting the chains. Each returns
// the seconds `iters` rounds took.
#define KVGATE_FMA_ROUNDS(V, SET, FMA, STORE)                                                                   \
  V a0 = SET(0.1f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, \
    a11 = a0;                                                                                                   \
  const V b = SET(0.999999f), c = SET(1e-7f);                                                                   \
  const auto t0 = Clock::now();                                                                                 \
  for (int64_t it = 0; it < iters; ++it) {                                                                      \
    a0 = FMA(a0, b, c), a1 = FMA(a1, b, c), a2 = FMA(a2, b, c), a3 = FMA(a3, b, c);                             \
    a4 = FMA(a4, b, c), a5 = FMA(a5, b, c), a6 = FMA(a6, b, c), a7 = FMA(a7, b, c);                             \
    a8 = FMA(a8, b, c), a9 = FMA(a9, b, c), a10 = FMA(a10, b, c), a11 = FMA(a11, b, c);                         \
    __asm__("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8),     \
                 "+v"(a9), "+v"(a10), "+v"(a11));                                                               \
  }                                                                                                             \
  const double t = std::chrono::duration<double>(Clock::now() - t0).count();                                    \
  float lanes[16];                                                                                              \
  STORE(lanes, a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11);                                    \
  g_sink = lanes[0];                                                                                            \
  return t

__attribute__((target("avx512f"))) double fma_seconds_avx512(int64_t iters) {
  KVGATE_FMA_ROUNDS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps);
}
double fma_seconds_avx2(int64_t iters) { KVGATE_FMA_ROUNDS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps); }
#undef KVGATE_FMA_ROUNDS

}  // namespace

const char* fma_peak_width() { return cpu_has_avx512() ? "AVX-512" : "AVX2"; }

double measure_fma_peak_gflops() {
  const bool wide = cpu_has_avx512();
  const int lanes = wide ? 16 : 8;
  constexpr int64_t kIters = 20'000'000;  // 240M FMAs a thread: ~50-100 ms
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    double flops = 0, slowest = 0;
#pragma omp parallel reduction(+ : flops) reduction(max : slowest)
    {
      const double t = wide ? fma_seconds_avx512(kIters) : fma_seconds_avx2(kIters);
      flops += 2.0 * lanes * 12 * static_cast<double>(kIters);
      slowest = t;
    }
    best = std::max(best, flops / slowest / 1e9);
  }
  return best;
}

std::string machine_summary() {
  std::string cpu = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("model name")) {
      auto colon = line.find(':');
      if (colon != std::string::npos) cpu = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  double mem_gib = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.starts_with("MemTotal:")) {
      mem_gib = std::strtod(line.c_str() + 9, nullptr) / (1024.0 * 1024.0);  // kB -> GiB
      break;
    }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s, %u cores, %d OpenMP threads, %.1f GiB RAM, %s (%d threads)",
                cpu.c_str(), std::thread::hardware_concurrency(), omp_get_max_threads(), mem_gib,
                openblas_get_config(), openblas_get_num_threads());
  return buf;
}

}  // namespace kvgate
