// Case-insensitive header lookup (ASCII only, as field names are tokens).
#include "gateway/server/http_headers.h"

namespace kvgate::server {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::optional<std::string_view> find_header(const HttpHeaders& headers, std::string_view name) {
  for (const HttpHeader& h : headers)
    if (iequals(h.name, name)) return std::string_view(h.value);
  return std::nullopt;
}

}  // namespace kvgate::server
