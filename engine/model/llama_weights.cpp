#include "engine/model/llama_weights.h"

#include <string>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_config.h"

namespace kvgate {

LlamaWeights::LlamaWeights(const GgufFile& f, const ModelConfig& c) {
  const int64_t d = c.dim, qd = c.q_dim(), kv = c.kv_dim(), ff = c.ffn_dim, v = c.vocab_size, hd = c.head_dim;
  token_embd = matrix(f, "token_embd.weight", d, v);
  output_norm = vector(f, "output_norm.weight", d);
  if (f.find_tensor("output.weight")) {
    output = matrix(f, "output.weight", d, v);
  } else {
    output = token_embd;  // tied embeddings
  }
  for (int32_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights l{};
    l.attn_norm = vector(f, p + "attn_norm.weight", d);
    if (f.find_tensor(p + "attn_qkv.weight")) {  // fused (phi3): Q, K and V rows one after the other
      const Matrix qkv = matrix(f, p + "attn_qkv.weight", d, qd + 2 * kv);
      l.wq = rows_of(qkv, 0, qd);
      l.wk = rows_of(qkv, qd, kv);
      l.wv = rows_of(qkv, qd + kv, kv);
    } else {
      l.wq = matrix(f, p + "attn_q.weight", d, qd);
      l.wk = matrix(f, p + "attn_k.weight", d, kv);
      l.wv = matrix(f, p + "attn_v.weight", d, kv);
    }
    l.wo = matrix(f, p + "attn_output.weight", qd, d);
    if (c.qkv_bias) {
      l.bq = vector(f, p + "attn_q.bias", qd);
      l.bk = vector(f, p + "attn_k.bias", kv);
      l.bv = vector(f, p + "attn_v.bias", kv);
    }
    if (c.qk_norm) {
      l.q_norm = vector(f, p + "attn_q_norm.weight", hd);
      l.k_norm = vector(f, p + "attn_k_norm.weight", hd);
    }
    if (c.post_norms) {
      l.attn_post_norm = vector(f, p + "post_attention_norm.weight", d);
      l.ffn_post_norm = vector(f, p + "post_ffw_norm.weight", d);
    }
    l.ffn_norm = vector(f, p + "ffn_norm.weight", d);
    if (c.fused_gate_up) {  // phi3: ffn_up holds the gate's rows, then the up projection's
      const Matrix gate_up = matrix(f, p + "ffn_up.weight", d, 2 * ff);
      l.w_gate = rows_of(gate_up, 0, ff);
      l.w_up = rows_of(gate_up, ff, ff);
    } else {
      l.w_gate = matrix(f, p + "ffn_gate.weight", d, ff);
      l.w_up = matrix(f, p + "ffn_up.weight", d, ff);
    }
    l.w_down = matrix(f, p + "ffn_down.weight", ff, d);
    layers.push_back(l);
  }
  for (std::string& name : tensors_read_into_config(f, c)) used_.insert(std::move(name));
  refuse_unused(f, c);
  // The embedding is gathered (one row per token), not streamed, per step.
  matrix_bytes_ -= token_embd.bytes();
  if (output.data == token_embd.data) matrix_bytes_ += output.bytes();
}

Matrix LlamaWeights::matrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows) {
  const int64_t dims[] = {cols, rows};
  const GgufTensor& t = f.tensor(name, dims);
  used_.insert(name);
  Matrix m;
  m.type = t.type;
  m.rows = rows;
  m.cols = cols;
  m.row_bytes = t.nbytes / static_cast<uint64_t>(rows);
  m.data = t.data;
  parameter_count_ += rows * cols;
  matrix_bytes_ += t.nbytes;
  return m;
}

Matrix LlamaWeights::rows_of(const Matrix& m, int64_t first, int64_t n) {
  Matrix part = m;
  part.rows = n;
  part.data = m.row(first);
  return part;
}

const float* LlamaWeights::vector(const GgufFile& f, const std::string& name, int64_t n) {
  const int64_t dims[] = {n};
  const GgufTensor& t = f.tensor(name, dims);
  used_.insert(name);
  parameter_count_ += n;
  if (t.type == TensorType::F32 && reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0)
    return reinterpret_cast<const float*>(t.data);
  auto& w = widened_.emplace_back(static_cast<size_t>(n));
  dequantize_row(t.type, t.data, w.data(), n);
  return w.data();
}

void LlamaWeights::refuse_unused(const GgufFile& f, const ModelConfig& c) const {
  for (const GgufTensor& t : f.tensors())
    if (!used_.contains(t.name))
      throw Error(f.source() + ": tensor '" + t.name + "' is not part of kvgate's " + c.arch +
                  " model: kvgate does not compute it, and refuses the model rather than serve it approximately");
}

}  // namespace kvgate
