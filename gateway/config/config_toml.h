// to_toml: the effective config as TOML, what `kvgate serve --print-config`
// prints: every option in table order, each under a comment saying what it
// does. Pure; safe from any thread.
//
// Invariant (tested, and fuzzed): parse_config(to_toml(c), ...) == c for
// every ServerConfig c that parse_config or the flags produced.
#pragma once

#include <string>

#include "gateway/config/server_config.h"

namespace kvgate::config {

std::string to_toml(const ServerConfig& c);

}  // namespace kvgate::config
