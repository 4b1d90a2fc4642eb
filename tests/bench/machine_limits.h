// The machine's own limits, measured in the same run as a benchmark, so its
// figures read as fractions of what this hardware can do: decode against
// memory bandwidth, prefill against GEMM throughput. Each call measures
// afresh (a few hundred ms to a few seconds) and uses every OpenMP thread.
#pragma once

#include <string>

namespace kvgate {

// STREAM "copy" (a[i] = b[i], 256 MiB arrays, far beyond any L3), best of
// several repetitions, counting read + write bytes as STREAM does. GB = 1e9.
double measure_copy_bandwidth_gbps();

// Sum of a 256 MiB float array: the bound for a step that reads every weight once.
double measure_read_bandwidth_gbps();

// OpenBLAS cblas_sgemm in the engine's own form, C[m x n] = A[m x k] * B^T
// with B stored as n rows of k (a GGUF weight matrix), best of several runs.
double measure_sgemm_gflops(int m, int n, int k);
// The compute ceiling: the best of sgemm at 512^3, 1024^3 and 2048^3.
double measure_sgemm_peak_gflops();

// The FMA units' ceiling: every OpenMP thread runs independent fused
// multiply-adds in registers, on the widest vectors the CPU has (AVX-512
// where cpu_has_avx512(), else AVX2), 2 FLOPs per lane. No GEMM reaches it;
// it is the figure a kernel's GFLOP/s is read against where a library's
// sgemm does not use the whole width (OpenBLAS's AVX2 kernel on a CPU with
// full-width AVX-512).
double measure_fma_peak_gflops();
// "AVX-512" or "AVX2": the width measure_fma_peak_gflops used.
const char* fma_peak_width();

// One line: CPU model, cores, OpenMP threads, memory, OpenBLAS build and threads.
std::string machine_summary();

}  // namespace kvgate
