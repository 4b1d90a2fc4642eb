// ModelConfig from a GGUF file's metadata (llama, qwen2, qwen3).
#pragma once

#include "engine/model_config.h"

namespace kvgate {

class GgufFile;

// Reads and validates the architecture's metadata; throws kvgate::Error
// naming the key or the inconsistency (e.g. head_count_kv not dividing
// head_count), and naming any key under the architecture's prefix whose
// effect kvgate does not compute (an unknown key, a RoPE scaling type
// other than none and linear).
ModelConfig read_model_config(const GgufFile& f);

}  // namespace kvgate
