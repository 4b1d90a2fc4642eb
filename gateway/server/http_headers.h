// HttpHeader / HttpHeaders: header fields as a handler sees and writes
// them, in arrival (or sending) order, names as spelled. Lookup is by the
// case-insensitive name (RFC 9110 field names are case-insensitive).
// Plain values: no locks, no threads of their own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::server {

struct HttpHeader {
  std::string name;
  std::string value;
};

using HttpHeaders = std::vector<HttpHeader>;

// The value of the first field called `name` (any case), or nothing.
std::optional<std::string_view> find_header(const HttpHeaders& headers, std::string_view name);

bool iequals(std::string_view a, std::string_view b);

}  // namespace kvgate::server
