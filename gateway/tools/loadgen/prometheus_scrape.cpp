// A minimal reader of the Prometheus text format. Pure; any thread.
#include "gateway/tools/loadgen/prometheus_scrape.h"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace kvgate::loadgen {

namespace {

// Reads `{k="v",...}` from s at i (at the '{'); the value of `want`, or ""
// when absent. nullopt when the label block is malformed.
std::optional<std::string> label_value(std::string_view s, size_t& i, std::string_view want) {
  std::string found;
  ++i;  // '{'
  for (;;) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '}') {
      ++i;
      return found;
    }
    const size_t name_start = i;
    while (i < s.size() && s[i] != '=' && s[i] != '}' && s[i] != ' ') ++i;
    const std::string_view name = s.substr(name_start, i - name_start);
    if (i + 1 >= s.size() || s[i] != '=' || s[i + 1] != '"') return std::nullopt;
    i += 2;
    std::string value;
    for (;;) {
      if (i >= s.size()) return std::nullopt;
      const char c = s[i++];
      if (c == '"') break;
      if (c == '\\') {
        if (i >= s.size()) return std::nullopt;
        const char e = s[i++];
        value.push_back(e == 'n' ? '\n' : e);
      } else {
        value.push_back(c);
      }
    }
    if (name == want) found = std::move(value);
  }
}

std::optional<double> sample_value(std::string_view rest) {
  size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') ++i;
  size_t end = i;
  while (end < rest.size() && rest[end] != ' ') ++end;
  if (end == i) return std::nullopt;
  const std::string token(rest.substr(i, end - i));
  char* stop = nullptr;
  const double v = std::strtod(token.c_str(), &stop);
  if (stop != token.c_str() + token.size() || std::isnan(v)) return std::nullopt;
  return v;
}

}  // namespace

std::map<std::string, double> sum_by_label(std::string_view text, std::string_view family, std::string_view label) {
  std::map<std::string, double> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (line.substr(0, family.size()) != family) continue;
    size_t i = family.size();
    if (i < line.size() && line[i] != '{' && line[i] != ' ') continue;  // a longer name
    std::string key;
    if (i < line.size() && line[i] == '{') {
      auto v = label_value(line, i, label);
      if (!v) continue;
      key = std::move(*v);
    }
    auto value = sample_value(line.substr(i));
    if (!value) continue;
    out[key] += *value;
  }
  return out;
}

}  // namespace kvgate::loadgen
