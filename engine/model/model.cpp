#include "engine/model/model.h"

#include "engine/model/gguf_config.h"

namespace kvgate {

Model::Model(std::unique_ptr<GgufFile> file)
    : file_(std::move(file)),
      config_(read_model_config(*file_)),
      weights_(std::make_unique<LlamaWeights>(*file_, config_)) {}

std::shared_ptr<const Model> Model::load(const std::string& path) {
  return from_file(GgufFile::open(path));
}

std::shared_ptr<const Model> Model::from_file(std::unique_ptr<GgufFile> file) {
  return std::shared_ptr<const Model>(new Model(std::move(file)));
}

}  // namespace kvgate
