// ModelConfig from a GGUF file's llama.* metadata.
#pragma once

#include "engine/model_config.h"

namespace kvgate {

class GgufFile;

// Reads and validates llama.* metadata; throws kvgate::Error naming the key
// or the inconsistency (e.g. heads not dividing dim).
ModelConfig read_model_config(const GgufFile& f);

}  // namespace kvgate
