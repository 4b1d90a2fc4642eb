// kvgate_bench_limits: this machine's memory bandwidth and GEMM throughput,
// the ceilings every other kvgate benchmark is read against.
#include <cstdio>

#include "tests/bench/machine_limits.h"

int main() {
  using namespace kvgate;
  std::printf("## Machine limits\n\n%s\n\n", machine_summary().c_str());
  std::printf("| limit | measured |\n|---|---:|\n");
  std::printf("| STREAM copy bandwidth (2 x 256 MiB, read + write bytes) | %.1f GB/s |\n", measure_copy_bandwidth_gbps());
  std::printf("| read bandwidth (sum of 256 MiB) | %.1f GB/s |\n", measure_read_bandwidth_gbps());
  std::printf("| FMA peak (%s, register-only, every thread) | %.1f GFLOP/s |\n", fma_peak_width(), measure_fma_peak_gflops());
  std::printf("| OpenBLAS sgemm peak (best of 512^3, 1024^3, 2048^3) | %.1f GFLOP/s |\n", measure_sgemm_peak_gflops());
  // Shapes of a 110M Llama (dim 768, FFN 2048): a 512-token prefill chunk,
  // and batched decode, where the weights are read for few rows.
  struct Shape {
    int m, n, k;
  };
  for (Shape s : {Shape{2048, 2048, 2048}, Shape{512, 2048, 768}, Shape{32, 2048, 768}, Shape{1, 2048, 768}})
    std::printf("| OpenBLAS sgemm %d x %d x %d (m x n x k) | %.1f GFLOP/s |\n", s.m, s.n, s.k,
                measure_sgemm_gflops(s.m, s.n, s.k));
  return 0;
}
