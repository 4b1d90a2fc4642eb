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

PathPattern::PathPattern(const char* pattern) : segments_(path_segments(pattern)) {}

bool PathPattern::match(std::span<const std::string_view> path, std::vector<std::string_view>& params) const {
  if (segments_.size() != path.size()) return false;
  params.clear();
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i].starts_with('{') && segments_[i].ends_with('}'))
      params.push_back(path[i]);
    else if (segments_[i] != path[i])
      return false;
  }
  return true;
}

}  // namespace kvgate::server
