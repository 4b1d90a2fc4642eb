// kvgate_gpu_bench's markdown: one table per part, the ratios to the
// device's measured limits beside the absolute figures, then the targets.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/bench/gpu_bench.h"

namespace kvgate::gpu_bench {
namespace {

std::string cell(double v, const char* format) {
  if (!std::isfinite(v)) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string met(double v, bool ok) { return std::isfinite(v) ? (ok ? "yes" : "no") : "–"; }

// The Q8_0 copy's decode beside its own roofline, and its batch-1 speed over
// BF16's: what keeping Q8_0 in its bytes on the device buys.
void print_q8_0_decode(const ModelConfig& c, const Figures& f) {
  std::printf("## Decode with Q8_0 weights (graphs on; median of %d steps after %d warm-up)\n\n", kDecodeSteps,
              kDecodeWarmup);
  std::printf("Model: the same shape and seed with every matrix and the embedding in Q8_0 (34 bytes per 32 "
              "weights), %.2f GB. %s Steps read the Q8_0 weights in place (the Q8_0 mat-vec, "
              "kernels/q8_0_matvec.h), %lld rows a pass, so 16 rows read them twice. Bytes per step and "
              "roofline as for BF16, with the weights read once at 34/32 bytes: the second pass of 16 rows is "
              "not in the roofline, which is what that row measures.\n\n",
              model_bytes(c, kQ8_0) / 1e9, f.q8_0_model_note.c_str(), static_cast<long long>(cuda::kQ8_0MatvecMaxRows));
  std::printf("| batch | path | weights GB | K/V GB | roofline tok/s | ms/step | tok/s | of roofline |\n"
              "|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t b = 0; b < kQ8_0DecodeBatches.size(); ++b) {
    const int32_t n = kQ8_0DecodeBatches[b];
    const double roof = roofline_tps(c, n, f.copy_gbps, kQ8_0), step = f.q8_0[b].step_s;
    std::printf("| %d | %s | %.2f | %.3f | %s | %s | %s | %s |\n", n,
                n <= cuda::kQ8_0MatvecMaxRows ? "Q8_0 mat-vec, 1 pass" : "Q8_0 mat-vec, 2 passes",
                decode_weight_bytes(c, n, kQ8_0) / 1e9, decode_kv_bytes(c, n) / 1e9, cell(roof, "%.0f").c_str(),
                cell(step * 1e3, "%.2f").c_str(), cell(n / step, "%.0f").c_str(),
                cell(100 * n / step / roof, "%.0f%%").c_str());
  }
  const double bytes_ratio = (decode_weight_bytes(c, 1) + decode_kv_bytes(c, 1)) /
                             (decode_weight_bytes(c, 1, kQ8_0) + decode_kv_bytes(c, 1));
  std::printf("\nQ8_0 over BF16 at batch 1 (graphs on), tokens/s: %s (the bytes per step alone: %.2fx).\n\n",
              cell(f.graphs[0].step_s / f.q8_0[0].step_s, "%.2fx").c_str(), bytes_ratio);
}

}  // namespace

void print_report(const ModelConfig& c, const std::string& vocab_file, const Figures& f) {
  const double params = c.n_layers * layer_matrix_params(c) + 2 * head_params(c) + norm_bytes(c) / 4;
  std::printf("# GPU engine (CUDA backend)\n\nDevice: %s.\n\n", f.device.c_str());
  std::printf("Model: Llama-3-8B-shaped, BF16 matrices (%d layers, dim %d, %d/%d heads, FFN %d, context %d), "
              "vocabulary of %d tokens copied from %s (Llama-3's 128,256 is not in shared/testdata): %.2f B "
              "parameters, %.2f GB. %s K/V in bf16, blocks of %d.\n\n",
              c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.ffn_dim, c.context_length, c.vocab_size,
              std::filesystem::path(vocab_file).filename().c_str(), params / 1e9, model_bytes(c) / 1e9,
              f.model_note.c_str(), kBlock);

  std::printf("## Device limits (this run)\n\n| limit | measured |\n|---|---:|\n");
  std::printf("| device-to-device copy: cudaMemcpyAsync of 1 GiB, bytes read + written per second, best of %d "
              "| %s GB/s |\n",
              kCopyReps, cell(f.copy_gbps, "%.0f").c_str());
  std::printf("| cuBLAS BF16 GEMM %d³ (cublasGemmEx, F32 compute and output), best of %d passes of %d "
              "| %s TFLOP/s |\n\n",
              kGemmPeak, kGemmPasses, kGemmPeakRepeat, cell(f.gemm_peak_tflops, "%.0f").c_str());

  std::printf("## Decode, %d tokens of context per sequence (median of %d steps after %d warm-up)\n\n", kDecodeContext,
              kDecodeSteps, kDecodeWarmup);
  std::printf("Bytes per step: the weights once (every matrix and the output head in BF16, the norms in F32, one "
              "embedding row per sequence) plus the K/V read (bf16, %.1f positions per sequence on average over the "
              "timed steps). Roofline: those bytes at the measured copy bandwidth.\n\n",
              kDecodeMeanContext);
  std::printf("| batch | weights GB | K/V GB | roofline tok/s | graphs: ms/step | tok/s | of roofline | "
              "no graphs: ms/step | tok/s | of roofline |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t b = 0; b < kDecodeBatches.size(); ++b) {
    const int32_t n = kDecodeBatches[b];
    const double roof = roofline_tps(c, n, f.copy_gbps);
    std::printf("| %d | %.2f | %.3f | %s", n, decode_weight_bytes(c, n) / 1e9, decode_kv_bytes(c, n) / 1e9,
                cell(roof, "%.0f").c_str());
    for (const DecodeFigures* d : {&f.graphs[b], &f.no_graphs[b]})
      std::printf(" | %s | %s | %s", cell(d->step_s * 1e3, "%.2f").c_str(), cell(n / d->step_s, "%.0f").c_str(),
                  cell(100 * n / d->step_s / roof, "%.0f%%").c_str());
    std::printf(" |\n");
  }

  std::printf("\n## Time outside kernels per decode step (median of %d steps)\n\n", kDecodeSteps);
  std::printf("The wall time of forward() less the device time cuda_last_step_timing() reports (its first to its "
              "last operation on the compute stream): the host's share, planning the step, launching or replaying "
              "its kernels and taking the logits.\n\n");
  std::printf("| batch | graphs: step ms | device ms | outside ms | steps replayed as graphs | "
              "no graphs: step ms | device ms | outside ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t b = 0; b < kDecodeBatches.size(); ++b) {
    const DecodeFigures &g = f.graphs[b], &o = f.no_graphs[b];
    const std::string replayed =
        g.graph_steps < 0 ? "–" : std::to_string(g.graph_steps) + "/" + std::to_string(kDecodeSteps);
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s |\n", kDecodeBatches[b], cell(g.step_s * 1e3, "%.3f").c_str(),
                cell(g.device_s * 1e3, "%.3f").c_str(), cell(g.outside_s * 1e3, "%.3f").c_str(), replayed.c_str(),
                cell(o.step_s * 1e3, "%.3f").c_str(), cell(o.device_s * 1e3, "%.3f").c_str(),
                cell(o.outside_s * 1e3, "%.3f").c_str());
  }

  std::printf("\n## Prefill, one sequence from an empty cache (median of %d after one untimed run)\n\n", kPrefillRuns);
  std::printf("Matmul FLOPs: 2 x T x the layers' matrix parameters, plus the output head for the last row; attention "
              "is not counted. cuBLAS alone: the layer's four GEMMs (fused Q/K/V, wo, fused gate/up, down) x %d "
              "layers, cublasGemmEx with BF16 in, F32 compute and out, in the backend's operand order.\n\n",
              c.n_layers);
  std::printf("| prompt tokens | matmul TFLOP | ms | tokens/s | matmul TFLOP/s | cuBLAS alone TFLOP/s | vs cuBLAS |\n"
              "|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < kPrefillTokens.size(); ++i) {
    const int32_t t = kPrefillTokens[i];
    const double flops = prefill_matmul_flops(c, t), achieved = flops / f.prefill_s[i] / 1e12;
    std::printf("| %d | %.2f | %s | %s | %s | %s | %s |\n", t, flops / 1e12, cell(f.prefill_s[i] * 1e3, "%.1f").c_str(),
                cell(t / f.prefill_s[i], "%.0f").c_str(), cell(achieved, "%.0f").c_str(),
                cell(f.cublas_tflops[i], "%.0f").c_str(), cell(100 * achieved / f.cublas_tflops[i], "%.0f%%").c_str());
  }

  std::printf("\n## TTFT, %d-token prompt, cold vs warm (median of %d; through the Scheduler, one forward pass "
              "each)\n\n",
              kTtftPrompt, kTtftRuns);
  std::printf("| prompt | tokens | cached | prefilled | TTFT ms | vs cold |\n|---|---:|---:|---:|---:|---:|\n");
  std::printf("| cold | %d | 0 | %d | %s | %s |\n", kTtftPrompt, kTtftPrompt, cell(f.cold_s * 1e3, "%.1f").c_str(),
              cell(f.cold_s / f.cold_s, "%.3f").c_str());
  std::printf("| warm | %d | %d | %d | %s | %s |\n\n", kTtftPrompt, kTtftCached, kTtftPrompt - kTtftCached,
              cell(f.warm_s * 1e3, "%.1f").c_str(), cell(f.warm_s / f.cold_s, "%.3f").c_str());

  print_q8_0_decode(c, f);

  const double b1 = 1 / f.graphs[0].step_s / roofline_tps(c, 1, f.copy_gbps);
  const double p2k = prefill_matmul_flops(c, kPrefillTokens[1]) / f.prefill_s[1] / 1e12 / f.cublas_tflops[1];
  const double ttft = f.warm_s / f.cold_s;
  std::printf("## Targets (issue 15)\n\n| target | measured | met |\n|---|---:|---|\n");
  std::printf("| decode at batch 1 (graphs on) ≥ 70%% of the roofline | %s | %s |\n",
              cell(100 * b1, "%.0f%%").c_str(), met(b1, b1 >= 0.7).c_str());
  std::printf("| prefill of 2,048 tokens ≥ 50%% of cuBLAS on the same GEMMs | %s | %s |\n",
              cell(100 * p2k, "%.0f%%").c_str(), met(p2k, p2k >= 0.5).c_str());
  std::printf("| warm TTFT ≤ 0.1 x cold | %s | %s |\n", cell(ttft, "%.3f").c_str(), met(ttft, ttft <= 0.1).c_str());
  if (f.failures.empty()) return;
  std::printf("\n## Failed (their cells are empty)\n\n");
  for (const std::string& why : f.failures) std::printf("- %s\n", why.c_str());
}

}  // namespace kvgate::gpu_bench
