#include "gateway/server/path_pattern.h"

namespace kvgate::server {

std::vector<std::string_view> path_segments(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t n = path.find('/');
    if (n != 0) parts.push_back(path.substr(0, n));
    path = n == std::string_view::npos ? std::string_view{} : path.substr(n + 1);
  }
  return parts;
}

bool match_path(std::string_view pattern, std::string_view path, std::vector<std::string_view>& params) {
  const std::vector<std::string_view> want = path_segments(pattern);
  const std::vector<std::string_view> got = path_segments(path);
  if (want.size() != got.size()) return false;
  params.clear();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].starts_with('{') && want[i].ends_with('}'))
      params.push_back(got[i]);
    else if (want[i] != got[i])
      return false;
  }
  return true;
}

}  // namespace kvgate::server
