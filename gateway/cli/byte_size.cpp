#include "gateway/cli/byte_size.h"

#include <charconv>
#include <string>

#include "engine/error.h"

namespace kvgate::cli {

int64_t parse_byte_size(std::string_view text) {
  auto bad = [&] {
    std::string msg = "'";
    msg.append(text).append("' is not a byte count (examples: 1048576, 512MiB, 4GiB, 2GB)");
    return Error(msg);
  };
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) throw bad();
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  struct Unit {
    std::string_view name;
    double scale;
  };
  static constexpr Unit units[] = {{"", 1},      {"B", 1},         {"KB", 1e3},         {"MB", 1e6},
                                   {"GB", 1e9},  {"TB", 1e12},     {"KiB", 1024.0},     {"MiB", 1048576.0},
                                   {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  for (const Unit& u : units)
    if (unit == u.name) {
      const double bytes = value * u.scale;
      if (bytes > 9.0e18) throw bad();
      return static_cast<int64_t>(bytes);
    }
  throw bad();
}

}  // namespace kvgate::cli
