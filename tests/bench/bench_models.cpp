#include "tests/bench/bench_models.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "engine/model/synthetic_model.h"

namespace kvgate {

BenchDirs bench_dirs(int argc, char** argv) {
  const char* env = std::getenv("KVGATE_SHARED");
  return {argc > 1 ? argv[1] : env && *env ? env : KVGATE_SHARED_DIR, argc > 2 ? argv[2] : "build/bench-models"};
}

namespace {

// "q4_k_m", as mkmodel --type names it.
std::string type_tag(const FileType& type) {
  std::string s = type.name();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Writes `s` to models_dir/name-TYPE.gguf unless it is there already.
std::string bench_model(const std::string& models_dir, const std::string& shared_dir, const std::string& name,
                        SyntheticModelSpec s, const FileType& type) {
  std::filesystem::create_directories(models_dir);
  const std::string path = models_dir + "/" + name + "-" + type_tag(type) + ".gguf";
  if (!std::filesystem::exists(path)) {
    s.type = type.base;
    s.k_quant_medium = type.medium;
    s.vocab_from = shared_dir + "/testdata/ggml-vocab-llama-spm.gguf";
    write_synthetic_model(s, path + ".tmp");  // renamed only when complete
    std::filesystem::rename(path + ".tmp", path);
  }
  return path;
}

}  // namespace

std::string bench_model_110m(const std::string& models_dir, const std::string& shared_dir, const FileType& type) {
  SyntheticModelSpec s;
  s.layers = 12, s.dim = 768, s.heads = 12, s.kv_heads = 4, s.ffn = 2048, s.context = 4096;
  return bench_model(models_dir, shared_dir, "llama-110m-ctx4096", s, type);
}

std::string bench_model_family(const std::string& models_dir, const std::string& shared_dir, const std::string& family,
                               const FileType& type) {
  SyntheticModelSpec s;
  s.context = 4096;
  if (family == "qwen2") {
    s.arch = "qwen2";
    s.layers = 24, s.dim = 896, s.heads = 14, s.kv_heads = 2, s.ffn = 4864, s.rope_base = 1e6f;
  } else if (family == "gemma2") {
    s.arch = "gemma2";
    s.layers = 26, s.dim = 1024, s.heads = 8, s.kv_heads = 4, s.head_dim = 128, s.ffn = 4096;
  } else if (family == "llama3") {
    s.layers = 24, s.dim = 1024, s.heads = 16, s.kv_heads = 4, s.ffn = 4096, s.rope_base = 500000;
    s.llama3_rope_freqs = true;
  } else {
    throw std::invalid_argument("bench_model_family: no shape for " + family);
  }
  return bench_model(models_dir, shared_dir, family + "-shape", s, type);
}

}  // namespace kvgate
