// Byte counts: parsing is strict (a typo such as "4GB " or "4 gigs" is an
// error, never a silent zero) and formatting is exact (see byte_size.h).
#include "gateway/config/byte_size.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

#include "base/error.h"

namespace kvgate::config {
namespace {

struct Unit {
  std::string_view name;
  double scale;
};

constexpr Unit kUnits[] = {{"", 1},         {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
                           {"GB", 1e9},     {"TB", 1e12},       {"KiB", 1024.0},       {"MiB", 1048576.0},
                           {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};

}  // namespace

int64_t parse_byte_size(std::string_view text) {
  auto bad = [&](std::string_view why) {
    std::string msg = "'";
    msg.append(text).append("' is not a byte count");
    if (!why.empty()) msg.append(": ").append(why);
    msg.append(" (examples: 1048576, 512MiB, 4GiB, 2GB)");
    return Error(msg);
  };
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // Whole numbers are read as integers, so counts past 2^53 stay exact;
  // "1.5GiB" and "1e9" go through a double.
  int64_t whole = 0;
  auto [int_end, int_ec] = std::from_chars(first, last, whole);
  const bool integral = int_ec == std::errc() && whole >= 0 &&
                        (int_end == last || (*int_end != '.' && *int_end != 'e' && *int_end != 'E'));
  double value = 0;
  const char* end = int_end;
  if (!integral) {
    auto [dbl_end, dbl_ec] = std::from_chars(first, last, value);
    // from_chars also reads "inf" and "nan"; neither is a size.
    if (dbl_ec != std::errc() || !std::isfinite(value) || value < 0) throw bad("");
    end = dbl_end;
  }
  std::string_view unit(end, static_cast<size_t>(last - end));
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);  // "16 KiB" reads as written in prose
  for (const Unit& u : kUnits) {
    if (unit != u.name || (u.name.empty() && end != last)) continue;
    if (integral && u.scale == std::floor(u.scale)) {
      const auto scale = static_cast<int64_t>(u.scale);
      if (whole > INT64_MAX / scale) throw bad("too large");
      return whole * scale;
    }
    const double bytes = value * u.scale;
    if (bytes >= 9.2e18) throw bad("too large");
    if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
    return static_cast<int64_t>(bytes);
  }
  throw bad("unknown unit");
}

std::string format_byte_size(int64_t bytes) {
  static constexpr struct {
    std::string_view name;
    int64_t scale;
  } kBinary[] = {{"TiB", int64_t{1} << 40}, {"GiB", int64_t{1} << 30}, {"MiB", int64_t{1} << 20}, {"KiB", 1024}};
  for (const auto& u : kBinary)
    if (bytes > 0 && bytes % u.scale == 0) return std::to_string(bytes / u.scale).append(u.name);
  return std::to_string(bytes);
}

std::string readable_byte_size(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  for (; u + 1 < std::size(kUnits) && v >= 1024; ++u) v /= 1024;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

}  // namespace kvgate::config
