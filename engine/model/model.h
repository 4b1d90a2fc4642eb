// A loaded model: the mapped GGUF file, its config and its weight views.
// Immutable after load, shared by every backend and request.
#pragma once

#include <memory>
#include <string>

#include "engine/model/gguf.h"
#include "engine/model/llama_weights.h"
#include "engine/model_config.h"

namespace kvgate {

class Model {
 public:
  // Opens, validates and maps `path`; throws kvgate::Error naming the problem.
  static std::shared_ptr<const Model> load(const std::string& path);
  static std::shared_ptr<const Model> from_file(std::unique_ptr<GgufFile> file);

  const GgufFile& file() const { return *file_; }
  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return *weights_; }

 private:
  explicit Model(std::unique_ptr<GgufFile> file);

  std::unique_ptr<GgufFile> file_;
  ModelConfig config_;
  std::unique_ptr<LlamaWeights> weights_;
};

}  // namespace kvgate
