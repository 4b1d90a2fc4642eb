// What llama.cpp computed on a model, as tests/models/llama_reference.cpp
// writes it: a prompt, llama.cpp's logits at eight of its positions and its
// greedy continuation. families_test.cpp and quant_models_test.cpp hold
// kvgate to these files.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cache/ids.h"

namespace kvgate::testing {

struct LlamaVectors {
  Tokens prompt;
  std::vector<std::pair<int32_t, std::vector<float>>> logits;  // (position, row)
  Tokens greedy;
};

inline LlamaVectors read_llama_vectors(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("no vectors at " + path + ": see tests/models/make_*vectors.sh");
  LlamaVectors v;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "prompt" || kind == "greedy") {
      size_t n = 0;
      words >> n;
      Tokens& ids = kind == "prompt" ? v.prompt : v.greedy;
      ids.resize(n);
      for (TokenId& id : ids) words >> id;
    } else if (kind == "logits") {
      int32_t pos = 0;
      size_t n = 0;
      words >> pos >> n;
      std::vector<float> row(n);
      for (float& x : row) words >> x;
      v.logits.emplace_back(pos, std::move(row));
    }
  }
  return v;
}

// The largest difference from llama.cpp's row, as a share of the row's
// largest magnitude (element-wise relative error is meaningless for logits
// near zero).
inline double relative_error(std::span<const float> got, const std::vector<float>& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return diff / scale;
}

inline TokenId argmax(std::span<const float> v) {
  return static_cast<TokenId>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace kvgate::testing
