// Views of a Llama-kind model's tensors inside the mapped GGUF file.
//
// Matrices stay in their stored type (F32, F16, BF16, Q8_0) and in place:
// the kernels dequantize as they read. Norm and bias vectors are small and
// read every step, so they are widened to f32 once, here.
//
// Every tensor in the file is accounted for: one that no field below (or
// the config's rope_freqs) takes is refused by name, so a model with parts
// kvgate does not compute never loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/model_config.h"
#include "engine/model/tensor_type.h"

namespace kvgate {

class GgufFile;
struct GgufTensor;

// A row-major matrix of `rows` rows with `cols` values each: y = W x maps
// cols -> rows. (GGUF dims are [cols, rows].)
struct Matrix {
  TensorType type = TensorType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  const std::byte* data = nullptr;

  const std::byte* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
  size_t bytes() const { return static_cast<size_t>(rows) * row_bytes; }
};

struct LayerWeights {
  const float* attn_norm;
  Matrix wq, wk, wv, wo;
  const float* bq = nullptr;      // [q_dim], when ModelConfig::qkv_bias
  const float* bk = nullptr;      // [kv_dim]
  const float* bv = nullptr;      // [kv_dim]
  const float* q_norm = nullptr;  // [head_dim], when ModelConfig::qk_norm
  const float* k_norm = nullptr;  // [head_dim]
  const float* attn_post_norm = nullptr;  // [dim], when ModelConfig::post_norms
  const float* ffn_norm;
  Matrix w_gate, w_up, w_down;
  const float* ffn_post_norm = nullptr;   // [dim]
};

class LlamaWeights {
 public:
  // Checks every tensor's presence and shape against the config, and that
  // the file holds no tensor besides them.
  LlamaWeights(const GgufFile& f, const ModelConfig& c);
  LlamaWeights(const LlamaWeights&) = delete;
  LlamaWeights& operator=(const LlamaWeights&) = delete;

  Matrix token_embd;
  const float* output_norm;
  Matrix output;  // token_embd when the model ties them
  std::vector<LayerWeights> layers;

  int64_t parameter_count() const { return parameter_count_; }
  size_t matrix_bytes() const { return matrix_bytes_; }  // bytes read by one decode step

 private:
  Matrix matrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows);
  const float* vector(const GgufFile& f, const std::string& name, int64_t n);
  // Rows [first, first + n) of a fused matrix, in place.
  static Matrix rows_of(const Matrix& m, int64_t first, int64_t n);
  void refuse_unused(const GgufFile& f, const ModelConfig& c) const;

  std::set<std::string, std::less<>> used_;
  std::vector<std::vector<float>> widened_;  // norms stored as F16/BF16 in the file
  int64_t parameter_count_ = 0;
  size_t matrix_bytes_ = 0;
};

}  // namespace kvgate
