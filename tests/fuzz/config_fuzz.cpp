// libFuzzer target: arbitrary bytes as a kvgate serve config file. The
// parser must return a config or throw kvgate::Error, never crash or throw
// anything else; and a config it accepts must print (--print-config) as TOML
// that reads back to the same config.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "gateway/config/config_file.h"
#include "gateway/config/config_toml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kvgate::config::ServerConfig config;
  try {
    config = kvgate::config::parse_config(text, "fuzz.toml");
  } catch (const kvgate::Error&) {
    return 0;
  }
  // Not caught: a printed config that does not read back is a bug.
  const kvgate::config::ServerConfig back = kvgate::config::parse_config(kvgate::config::to_toml(config), "printed");
  if (!(back == config)) std::abort();
  return 0;
}
