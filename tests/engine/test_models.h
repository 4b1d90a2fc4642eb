// The models engine tests run on: stories260K from ../shared, and small
// synthetic Llamas (seeded random weights, a real 32000-token vocabulary).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "engine/model/model.h"
#include "engine/model/synthetic_model.h"
#include "tests/shared_data.h"

namespace kvgate::testing {

inline std::shared_ptr<const Model> stories() {
  static auto m = Model::load(shared_path("models/stories260K.gguf"));
  return m;
}

// A small synthetic Llama with the llama-spm vocabulary (32000 tokens),
// written once per process to a temp file that is unlinked once mapped.
inline std::shared_ptr<const Model> synthetic(uint64_t seed = 1) {
  SyntheticModelSpec s;
  s.layers = 2, s.dim = 64, s.heads = 4, s.kv_heads = 2, s.ffn = 128, s.context = 512, s.seed = seed;
  s.vocab_from = shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvgate-prefix-" + std::to_string(::getpid()) + "-" + std::to_string(seed) + ".gguf");
  write_synthetic_model(s, path.string());
  auto m = Model::load(path.string());
  std::filesystem::remove(path);
  return m;
}

}  // namespace kvgate::testing
