#include "tests/bench/bench_models.h"

#include <cstdlib>
#include <filesystem>

#include "engine/model/synthetic_model.h"

namespace kvgate {

BenchDirs bench_dirs(int argc, char** argv) {
  const char* env = std::getenv("KVGATE_SHARED");
  return {argc > 1 ? argv[1] : env && *env ? env : KVGATE_SHARED_DIR, argc > 2 ? argv[2] : "build/bench-models"};
}

std::string bench_model_110m(const std::string& models_dir, const std::string& shared_dir, TensorType type) {
  std::filesystem::create_directories(models_dir);
  const std::string tag = type == TensorType::F32 ? "f32" : type == TensorType::F16 ? "f16"
                          : type == TensorType::BF16 ? "bf16" : "q8_0";
  const std::string path = models_dir + "/llama-110m-ctx4096-" + tag + ".gguf";
  if (!std::filesystem::exists(path)) {
    SyntheticModelSpec s;
    s.layers = 12, s.dim = 768, s.heads = 12, s.kv_heads = 4, s.ffn = 2048, s.context = 4096;
    s.type = type;
    s.vocab_from = shared_dir + "/testdata/ggml-vocab-llama-spm.gguf";
    write_synthetic_model(s, path + ".tmp");  // renamed only when complete
    std::filesystem::rename(path + ".tmp", path);
  }
  return path;
}

}  // namespace kvgate
