// What a model's weights are stored as: the file type its publisher named
// (general.file_type: "Q4_K_M") and, per tensor type, how many tensors and
// bytes. `kvgate info`, the server's start-up line and /v1/models show it,
// so an operator sees what a quantized file costs in memory and what the
// KV cache has left.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/gguf.h"

namespace kvgate {

struct WeightTypeBytes {
  TensorType type;
  int64_t tensors = 0;
  uint64_t bytes = 0;
};

struct WeightSummary {
  // llama.cpp's name for general.file_type ("Q4_K_M", "F16"), or, without
  // that key, the type holding most of the bytes.
  std::string file_type;
  uint64_t bytes = 0;                  // all tensors
  std::vector<WeightTypeBytes> types;  // most bytes first

  // "Q4_K_M, 64.1 MiB (Q4_K 40.3 MiB in 13 tensors, Q6_K 23.8 MiB in 3, F32 0.0 MiB in 5)"
  std::string text() const;
};

WeightSummary summarize_weights(const GgufFile& file);

// llama.cpp's name of a general.file_type id (LLAMA_FTYPE_*): "Q4_K_M" for
// 15; "file type N" for an id it has no name for here.
std::string llama_file_type_name(uint32_t id);

}  // namespace kvgate
