// The synthetic models the benchmarks run, made once with mkmodel's writer
// and reused from a models directory (build/bench-models by default).
#pragma once

#include <string>

#include "engine/tensor_type.h"

namespace kvgate {

// The ~110M-parameter Llama of the issues: dim 768, 12 layers, 12 heads,
// 4 KV heads, FFN 2048, the llama-spm vocabulary (32000), context 4096.
// Returns its path, writing it first if it is not there yet.
std::string bench_model_110m(const std::string& models_dir, const std::string& shared_dir, TensorType type);

}  // namespace kvgate
