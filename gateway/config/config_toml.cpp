// Writes the option table out in order; values go through format_value(),
// which escapes strings the way TOML's basic strings need, so the output
// parses back to the same config.
#include "gateway/config/config_toml.h"

#include "gateway/config/config_options.h"

namespace kvgate::config {

std::string to_toml(const ServerConfig& c) {
  std::string out = "# kvgate serve: the effective configuration (--print-config).\n";
  for (std::string_view table : option_tables()) {
    out.append("\n[").append(table).append("]\n");
    for (const Option& o : all_options()) {
      if (o.table != table) continue;
      out.append("# ").append(o.help).append("  [--").append(o.flag);
      if (o.kind == OptionKind::kBool) out.append(" / --no-").append(o.flag);
      out.append("]\n");
      out.append(o.key).append(" = ").append(format_value(o, o.get(c))).append("\n");
    }
  }
  return out;
}

}  // namespace kvgate::config
