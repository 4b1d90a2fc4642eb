#include "engine/model/weight_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kvgate {

std::string llama_file_type_name(uint32_t id) {
  static const std::map<uint32_t, const char*> names{
      {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
      {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
      {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"}};
  const auto it = names.find(id);
  return it != names.end() ? it->second : "file type " + std::to_string(id);
}

WeightSummary summarize_weights(const GgufFile& file) {
  WeightSummary s;
  std::map<uint32_t, WeightTypeBytes> by_type;
  for (const GgufTensor& t : file.tensors()) {
    WeightTypeBytes& w = by_type.try_emplace(static_cast<uint32_t>(t.type), WeightTypeBytes{t.type}).first->second;
    ++w.tensors;
    w.bytes += t.nbytes;
    s.bytes += t.nbytes;
  }
  for (const auto& [id, w] : by_type) s.types.push_back(w);
  std::stable_sort(s.types.begin(), s.types.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (file.has("general.file_type"))
    s.file_type = llama_file_type_name(static_cast<uint32_t>(file.get_uint("general.file_type")));
  else if (!s.types.empty())
    s.file_type = std::string(ggml_type_name(static_cast<uint32_t>(s.types.front().type)));
  return s;
}

std::string WeightSummary::text() const {
  auto mib = [](uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / 1048576.0);
    return std::string(buf);
  };
  std::string out = file_type + ", " + mib(bytes) + " (";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    out += std::string(ggml_type_name(static_cast<uint32_t>(types[i].type))) + " " + mib(types[i].bytes) + " in " +
           std::to_string(types[i].tensors) + (i == 0 ? " tensors" : "");
  }
  return out + ")";
}

}  // namespace kvgate
