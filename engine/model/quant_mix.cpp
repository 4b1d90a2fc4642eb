#include "engine/model/quant_mix.h"

#include <array>
#include <charconv>

namespace kvgate {
namespace {

struct Named {
  std::string_view name;
  FileType type;
  uint32_t ftype;
};
constexpr std::array kFileTypes{
    Named{"f32", {TensorType::F32, false}, 0},   Named{"f16", {TensorType::F16, false}, 1},
    Named{"bf16", {TensorType::BF16, false}, 32}, Named{"q8_0", {TensorType::Q8_0, false}, 7},
    Named{"q4_0", {TensorType::Q4_0, false}, 2},  Named{"q4_1", {TensorType::Q4_1, false}, 3},
    Named{"q5_0", {TensorType::Q5_0, false}, 8},  Named{"q5_1", {TensorType::Q5_1, false}, 9},
    // All-k-quant files have no llama.cpp name of their own; these are the
    // ids of the _S mixtures, the nearest.
    Named{"q4_k", {TensorType::Q4_K, false}, 14}, Named{"q5_k", {TensorType::Q5_K, false}, 16},
    Named{"q6_k", {TensorType::Q6_K, false}, 18}, Named{"q4_k_m", {TensorType::Q4_K, true}, 15},
    Named{"q5_k_m", {TensorType::Q5_K, true}, 17},
};

// llama.cpp's use_more_bits: the first and last eighth of the layers, and
// every third one between.
bool more_bits(int32_t layer, int32_t n) { return layer < n / 8 || layer >= 7 * n / 8 || (layer - n / 8) % 3 == 2; }

// "blk.N." -> N, or -1.
int32_t layer_of(std::string_view name) {
  if (!name.starts_with("blk.")) return -1;
  int32_t layer = -1;
  std::from_chars(name.data() + 4, name.data() + name.size(), layer);
  return layer;
}

TensorType fit_rows(TensorType t, int64_t cols) {
  const auto traits = tensor_type_traits(static_cast<uint32_t>(t));
  if (cols % traits->block_elems == 0) return t;
  switch (t) {
    case TensorType::Q4_K: return TensorType::Q5_0;
    case TensorType::Q5_K: return TensorType::Q5_1;
    case TensorType::Q6_K: return TensorType::Q8_0;
    default: return t;
  }
}

}  // namespace

uint32_t FileType::llama_ftype() const {
  for (const Named& n : kFileTypes)
    if (n.type.base == base && n.type.medium == medium) return n.ftype;
  return 0;
}

std::string FileType::name() const {
  for (const Named& n : kFileTypes)
    if (n.type.base == base && n.type.medium == medium) {
      std::string s(n.name);
      for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
      return s;
    }
  return std::string(ggml_type_name(static_cast<uint32_t>(base)));
}

std::optional<FileType> parse_file_type(std::string_view name) {
  for (const Named& n : kFileTypes)
    if (n.name == name) return n.type;
  return std::nullopt;
}

TensorType matrix_type(const FileType& ft, std::string_view name, int64_t cols, int32_t n_layers, bool tied_output) {
  TensorType t = ft.base;
  if (ft.medium) {
    const bool output = name == "output.weight" || (tied_output && name == "token_embd.weight");
    const int32_t layer = layer_of(name);
    if (output)
      t = TensorType::Q6_K;
    else if (name.ends_with(".attn_qkv.weight"))
      t = ft.base == TensorType::Q4_K ? TensorType::Q5_K : TensorType::Q6_K;
    else if ((name.ends_with(".attn_v.weight") || name.ends_with(".ffn_down.weight")) && more_bits(layer, n_layers))
      t = TensorType::Q6_K;
  }
  return fit_rows(t, cols);
}

}  // namespace kvgate
