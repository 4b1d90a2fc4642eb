// Bytes as lower-case hex text and back: request ids, the admin token and
// its digest file. Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvgate::serving {

inline std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

// Nothing for text that is not an even number of lower-case hex digits.
inline std::optional<std::string> from_hex(std::string_view h) {
  if (h.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) {
    const int a = nibble(h[i]), b = nibble(h[i + 1]);
    if (a < 0 || b < 0) return std::nullopt;
    out += static_cast<char>(a * 16 + b);
  }
  return out;
}

}  // namespace kvgate::serving
