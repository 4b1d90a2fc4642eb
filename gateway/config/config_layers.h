// ConfigLayers: a ServerConfig built up in layers, defaults < file < flags,
// where every value remembers which layer set it ("kvgate.toml:4:14",
// "--io-threads"), so an error says exactly what to change.
//
// Invariants: a value is set only after check_value() accepted it; a
// rejected value leaves the lower layer's value and adds a problem; finish()
// returns a config only when there are no problems (else it throws one
// kvgate::Error listing all of them: the file's in line order, then the
// flags'), so a typo never starts a server on a silently different setting.
//
// Threads: one thread builds it; not shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/config/config_options.h"
#include "gateway/config/server_config.h"

namespace kvgate::config {

// Where a value came from: a file position or a flag.
struct Origin {
  std::string where;  // "kvgate.toml:4:14", "--io-threads"; empty for a default
  uint32_t line = 0;  // in the file, so problems are told in file order; 0 for a flag
  uint32_t column = 0;
};

class ConfigLayers {
 public:
  ConfigLayers();

  // Sets `o` to `v` from `origin`, or records why not (the origin, o's name
  // and check_value()'s reason).
  void set(const Option& o, const OptionValue& v, Origin origin);
  // A problem found while reading a layer: "<where>: <message>".
  void add_problem(const Origin& origin, std::string_view message);

  bool ok() const { return problems_.empty(); }
  // Runs check_config() on the result; throws kvgate::Error listing every
  // problem, one per line.
  ServerConfig finish() const;

 private:
  ServerConfig config_;
  struct Problem {
    Origin origin;
    std::string text;  // "<where>: <message>"
  };
  std::vector<Origin> origin_;  // by option_index(); an empty `where` = the default
  std::vector<Problem> problems_;
};

}  // namespace kvgate::config
