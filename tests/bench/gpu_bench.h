// kvgate_gpu_bench (gpu_bench.cpp): what it runs, what the model's shape
// alone says about it, and what it measured, shared with the report
// (gpu_report.cpp). Figures not measured are NaN and print as "–".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/kv_layout.h"
#include "engine/model_config.h"
#include "kernels/gemm.h"
#include "kernels/q8_0_matvec.h"
#include "tests/bench/gpu_limits.h"

namespace kvgate::gpu_bench {

inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
inline constexpr int32_t kBlock = 16;
inline constexpr int32_t kDecodeContext = 512, kDecodeWarmup = 3, kDecodeSteps = 16;
inline constexpr std::array<int32_t, 4> kDecodeBatches{1, 8, 32, 64};
// The Q8_0 copy's decode (graphs on): 1 and 8 rows are one pass of the
// Q8_0 mat-vec (kernels/q8_0_matvec.h), 16 two: whether a second pass over
// the weights costs what the bytes say.
inline constexpr std::array<int32_t, 3> kQ8_0DecodeBatches{1, 8, 16};
static_assert(kQ8_0DecodeBatches[1] == cuda::kQ8_0MatvecMaxRows && kQ8_0DecodeBatches[2] <= cuda::kBlockPassedRows,
              "one pass and two");
inline constexpr std::array<int32_t, 3> kPrefillTokens{512, 2048, 8192};
inline constexpr int kPrefillRuns = 3;
inline constexpr int32_t kTtftPrompt = 8192, kTtftCached = 7680, kTtftRuns = 5;
static_assert(kTtftCached % kBlock == 0, "the shared prefix is whole blocks: all of it can hit");
inline constexpr size_t kCopyBytes = size_t{1} << 30;
inline constexpr int kCopyReps = 10, kGemmPeak = 8192, kGemmPeakRepeat = 10, kGemmPasses = 3;

// ---- What the shape alone says ----

// How the benchmark's two models store their matrices and embedding (the
// norms are f32 in both): BF16, and the same weights in Q8_0, 34 bytes per
// 32.
struct WeightFormat {
  const char* name;
  double bytes_per_weight;
};
inline constexpr WeightFormat kBF16{"BF16", 2.0};
inline constexpr WeightFormat kQ8_0{"Q8_0", 34.0 / 32};

// One layer's GEMMs as the backend runs them, Q/K/V and gate/up fused
// (kernels/device_weights.cpp); wo and down add into the residual stream.
inline std::vector<GemmShape> layer_gemms(const ModelConfig& c) {
  return {{c.dim + 2 * c.kv_dim(), c.dim, 0}, {c.dim, c.dim, 1}, {2 * c.ffn_dim, c.dim, 0}, {c.dim, c.ffn_dim, 1}};
}

inline double layer_matrix_params(const ModelConfig& c) {
  double n = 0;
  for (const GemmShape& g : layer_gemms(c)) n += static_cast<double>(g.rows) * static_cast<double>(g.cols);
  return n;
}

inline double head_params(const ModelConfig& c) { return static_cast<double>(c.vocab_size) * c.dim; }
inline double norm_bytes(const ModelConfig& c) { return 4.0 * c.dim * (2.0 * c.n_layers + 1); }  // f32

// The file: every matrix in `f` (embedding and head untied), the norms in F32.
inline double model_bytes(const ModelConfig& c, WeightFormat f = kBF16) {
  return f.bytes_per_weight * (c.n_layers * layer_matrix_params(c) + 2 * head_params(c)) + norm_bytes(c);
}

// What one decode step of `batch` rows must read of the weights: every
// matrix once, the output head included, the norms, and one embedding row
// per sequence (the embedding table is gathered from, not read whole).
inline double decode_weight_bytes(const ModelConfig& c, int32_t batch, WeightFormat f = kBF16) {
  return f.bytes_per_weight * (c.n_layers * layer_matrix_params(c) + head_params(c) + static_cast<double>(batch) * c.dim) +
         norm_bytes(c);
}

// Positions a timed decode step attends over, on average: step j (from 0)
// writes position kDecodeContext + j and reads it and every one before.
inline constexpr double kDecodeMeanContext = kDecodeContext + kDecodeWarmup + (kDecodeSteps - 1) / 2.0 + 1;

inline double decode_kv_bytes(const ModelConfig& c, int32_t batch) {
  return static_cast<double>(batch) * kDecodeMeanContext * static_cast<double>(kv_bytes_per_token(c, KvType::kBF16));
}

// Tokens/s if a decode step cost only its bytes at the copy bandwidth.
inline double roofline_tps(const ModelConfig& c, int32_t batch, double copy_gbps, WeightFormat f = kBF16) {
  return batch * copy_gbps * 1e9 / (decode_weight_bytes(c, batch, f) + decode_kv_bytes(c, batch));
}

// The matmuls of a T-token prefill: every layer's GEMMs over T rows, and the
// output head for the one row whose logits are wanted. Attention is not counted.
inline double prefill_matmul_flops(const ModelConfig& c, int32_t tokens) {
  return 2.0 * tokens * c.n_layers * layer_matrix_params(c) + 2.0 * head_params(c);
}

// ---- What was measured ----

struct DecodeFigures {  // medians over the timed steps
  double step_s = kNan, device_s = kNan, outside_s = kNan;
  int graph_steps = -1;  // of the timed steps, those that replayed a CUDA graph
};

struct Figures {
  std::string device = "none in this run (cuda_device_count() is 0), so every GPU column is \"–\"";
  std::string model_note = "Not written (no device).";
  double copy_gbps = kNan, gemm_peak_tflops = kNan;
  std::array<DecodeFigures, kDecodeBatches.size()> graphs{}, no_graphs{};
  std::string q8_0_model_note = "Not written (no device).";
  std::array<DecodeFigures, kQ8_0DecodeBatches.size()> q8_0{};  // graphs on
  std::array<double, kPrefillTokens.size()> prefill_s{kNan, kNan, kNan}, cublas_tflops{kNan, kNan, kNan};
  double cold_s = kNan, warm_s = kNan;
  std::vector<std::string> failures;  // parts that failed; their cells stay empty
};

// The markdown on stdout: every table, "–" where nothing was measured.
void print_report(const ModelConfig& c, const std::string& vocab_file, const Figures& f);

}  // namespace kvgate::gpu_bench
