// Which type each tensor of a quantized file gets: llama-quantize's choices
// for the file types people download, so that `kvgate mkmodel --type
// q4_k_m` writes the mixture a published Q4_K_M GGUF has.
//
// A file type names a base type for the matrices; the _M ("medium")
// mixtures give some tensors more bits, by llama.cpp's rule: output.weight
// (or a tied token_embd.weight) Q6_K; attn_v and ffn_down Q6_K in the first
// and last eighth of the layers and every third layer between; a fused
// attn_qkv Q5_K (Q4_K_M) or Q6_K (Q5_K_M). A k-quant needs rows of whole
// 256-value blocks; a tensor whose rows are not falls back, as llama.cpp's
// does, to a 32-value type of about the same bits (Q4_K to Q5_0, Q5_K to
// Q5_1, Q6_K to Q8_0). Norms, biases and RoPE factors stay F32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/model/tensor_type.h"

namespace kvgate {

struct FileType {
  TensorType base = TensorType::F32;
  bool medium = false;  // the _M mixture (Q4_K or Q5_K base only)

  // llama.cpp's general.file_type id (LLAMA_FTYPE_*).
  uint32_t llama_ftype() const;
  // "F16", "Q4_K_M", ...
  std::string name() const;
};

// The file type of a name as mkmodel takes it: f32, f16, bf16, q8_0, q4_0,
// q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, q4_k_m, q5_k_m; nullopt otherwise.
std::optional<FileType> parse_file_type(std::string_view name);

// The type of matrix `name` (a GGUF tensor name, "blk.3.attn_v.weight"),
// whose rows are `cols` values, in a file of type `ft` with `n_layers`
// layers. `tied_output`: token_embd.weight is also the output matrix.
TensorType matrix_type(const FileType& ft, std::string_view name, int64_t cols, int32_t n_layers, bool tied_output);

}  // namespace kvgate
