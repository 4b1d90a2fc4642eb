// ModelConfig from a GGUF file's metadata (llama, qwen2, qwen3, gemma2, gemma3, phi3).
#pragma once

#include <string>
#include <vector>

#include "engine/model_config.h"

namespace kvgate {

class GgufFile;

// Reads and validates the architecture's metadata; throws kvgate::Error
// naming the key or the inconsistency (e.g. head_count_kv not dividing
// head_count), and naming any key under the architecture's prefix whose
// effect kvgate does not compute (an unknown key, a RoPE scaling type
// other than none and linear).
ModelConfig read_model_config(const GgufFile& f);

// The tensors read_model_config took into the config (RoPE factors: the
// one in use, and LongRoPE's other set), for the weights' accounting.
std::vector<std::string> tensors_read_into_config(const GgufFile& f, const ModelConfig& c);

}  // namespace kvgate
