// The families of the Llama kind kvgate computes (llama, qwen2, qwen3,
// gemma2, gemma3, phi3) and what each adds to the config that the common
// keys give: the RoPE pairing, Q/K norms, RoPE factors, gemma's scales,
// caps and windows, phi3's fused FFN and LongRoPE. As llama.cpp computes
// them (src/models/<arch>.cpp). Internal to engine/model: read through
// gguf_config.h.
#pragma once

#include <string>
#include <string_view>

#include "engine/model_config.h"

namespace kvgate {

class GgufFile;

enum class Variant { kPlain, kGemma2, kGemma3, kPhi3 };

struct Family {
  std::string_view arch;
  RopeStyle rope;
  bool qk_norm;     // attn_q_norm / attn_k_norm in every layer
  bool rope_freqs;  // may carry rope_freqs.weight (Llama 3.1 and later)
  Variant variant;

  // Whether a key under "<arch>." (given without the prefix) is one this
  // family reads beyond the common ones.
  bool takes_key(std::string_view key) const;
};

// The family of general.architecture `arch`; throws naming it when kvgate
// runs no such family.
const Family& family_of(const GgufFile& f, const std::string& arch);

// Fills what `fam` adds, once the common keys are in `c`; throws naming a
// key or tensor out of range.
void read_family_config(const GgufFile& f, const Family& fam, const std::string& prefix, ModelConfig& c);

}  // namespace kvgate
