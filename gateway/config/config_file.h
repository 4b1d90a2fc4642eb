// The TOML config file: reading it into a ServerConfig, with every problem
// reported as "<file>:<line>:<column>: <key> <what is wrong>" so an operator
// can go straight to it. Unknown tables and keys are errors (a typo must not
// be silently ignored), with the nearest valid name suggested.
//
// Threads: no shared state; call from any thread.
#pragma once

#include <string>
#include <string_view>

#include "gateway/config/config_layers.h"
#include "gateway/config/server_config.h"

namespace kvgate::config {

// The defaults overridden by the TOML in `text`; `source_name` names it in
// errors (a path, or "<flags>" ...). Throws kvgate::Error listing every
// problem: a TOML syntax error, an unknown table or key, a wrong type, a
// value out of range, options that contradict each other.
ServerConfig parse_config(std::string_view text, std::string_view source_name);

// parse_config() of the file at `path`; an unreadable file is a
// kvgate::Error naming it.
ServerConfig load_config(const std::string& path);

// The layer parse_config() adds: for the flags, which stack on top of it.
void add_toml_layer(ConfigLayers& layers, std::string_view text, std::string_view source_name);
// The file's bytes (at most 1 MiB), or a kvgate::Error naming the path.
std::string read_config_file(const std::string& path);

}  // namespace kvgate::config
