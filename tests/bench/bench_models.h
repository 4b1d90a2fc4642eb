// The synthetic models the benchmarks run, made once with mkmodel's writer
// and reused from a models directory (build/bench-models by default).
#pragma once

#include <string>

#include "engine/model/quant_mix.h"
#include "engine/model/synthetic_model.h"
#include "engine/model/tensor_type.h"

namespace kvgate {

// Where a benchmark finds ../shared and keeps its models:
// `bench SHARED_DIR MODELS_DIR`, each optional. SHARED_DIR defaults to
// $KVGATE_SHARED, then to the shared/ beside the source tree; MODELS_DIR to
// build/bench-models.
struct BenchDirs {
  std::string shared;
  std::string models;
};
BenchDirs bench_dirs(int argc, char** argv);

// The ~110M-parameter Llama of the issues: dim 768, 12 layers, 12 heads,
// 4 KV heads, FFN 2048, the llama-spm vocabulary (32000), context 4096.
// Returns its path, writing it first if it is not there yet.
// The matrices in `type`, or in a file type's mixture (quant_mix.h: Q4_K_M).
std::string bench_model_110m(const std::string& models_dir, const std::string& shared_dir, const FileType& type);
inline std::string bench_model_110m(const std::string& models_dir, const std::string& shared_dir, TensorType type) {
  return bench_model_110m(models_dir, shared_dir, FileType{type, false});
}

// The families' benchmark shapes, about 0.3 to 0.45B parameters each with
// the llama-spm vocabulary (32000; their own vocabularies are not in
// ../shared): "qwen2" (Qwen2.5-0.5B's layers: 24 x 896, 14 heads, 2 KV
// heads, FFN 4864, biases), "gemma2" (26 x 1024, 8 heads of 128, 4 KV
// heads, FFN 4096, window 4096, soft-capping) and "llama3" (24 x 1024, 16
// heads, 4 KV heads, FFN 4096, RoPE base 500,000 with Llama 3.1's factors).
// Returns the path, writing the file first if it is not there yet.
std::string bench_model_family(const std::string& models_dir, const std::string& shared_dir, const std::string& family,
                               const FileType& type);

}  // namespace kvgate
