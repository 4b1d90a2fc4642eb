// The option table: every ServerConfig field once, with its TOML table and
// key, its `kvgate serve` flag, its kind, its range and its help line. The
// file reader, the flags, --print-config and the docs test all walk this one
// table, so an option cannot exist in one of them and be missing from
// another.
//
// Invariants: table.key names are unique and so are flags; every value a
// setter receives has passed check_value() first; the default ServerConfig
// passes check_value() on every option and check_config().
//
// Threads: the table is built once (a function-local static) and immutable.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gateway/config/server_config.h"

namespace kvgate::config {

enum class OptionKind {
  kBool,
  kInt,      // a TOML integer
  kBytes,    // a byte count: a TOML integer, or a string such as "4GiB"
  kString,   // a TOML string (paths, names); never control characters
  kChoice,   // a TOML string out of Option::choices
  kAddress,  // a TOML string "host:port"
};

// A value as the table moves it: bool for kBool, int64_t for kInt and kBytes
// (bytes already parsed; "auto" as kAutoBytes), std::string for the rest
// (addresses as text).
using OptionValue = std::variant<bool, int64_t, std::string>;

// The subcommands that read a ServerConfig. Each has flags for the options
// it uses only, so its --help lists nothing that means nothing to it. A
// config file may hold every option (one file can configure a front and its
// replicas): a command ignores the keys it does not use.
enum class ServerCommand : uint8_t {
  kServe = 1,  // kvgate serve (and kvgate cache purge, which reads serve's configuration)
  kRoute = 2,  // kvgate route, the front: the edge's options, none of the engine's
};

struct Option {
  std::string_view table;  // "server"
  std::string_view key;    // "io_threads"
  std::string_view flag;   // "io-threads": the flag is --io-threads (bools also --no-io-threads)
  OptionKind kind;
  std::string_view help;   // one line: what it does and what 0 or empty means
  int64_t min = 0;         // kInt and kBytes: the inclusive range
  int64_t max = std::numeric_limits<int64_t>::max();
  bool allow_empty = true;                    // kString
  std::span<const std::string_view> choices;  // kChoice
  bool allow_auto = false;                    // kBytes: "auto" (kAutoBytes) is a value too
  OptionValue (*get)(const ServerConfig&) = nullptr;
  void (*set)(ServerConfig&, const OptionValue&) = nullptr;  // the value has passed check_value()
  // The ServerCommands with a flag for it, as a mask: both, unless the row
  // is serve_only (the engine's) or route_only (the front's).
  uint8_t commands = static_cast<uint8_t>(ServerCommand::kServe) | static_cast<uint8_t>(ServerCommand::kRoute);
  bool is_flag_of(ServerCommand c) const { return (commands & static_cast<uint8_t>(c)) != 0; }

  std::string name() const;  // "server.io_threads"
};

// In file order: [server], [tls], [model], [limits], [data], [admin], [log].
std::span<const Option> all_options();
// The tables, in the same order.
std::span<const std::string_view> option_tables();
// The option's position in all_options(), for per-option bookkeeping.
size_t option_index(const Option& o);
const Option* find_option(std::string_view table, std::string_view key);

// Why `v` is out of range for `o` (empty when it is fine), as a phrase that
// follows the option's name: "must be at least 1 (got 0)". `v` has o's kind.
std::string check_value(const Option& o, const OptionValue& v);
// A flag's text as a value of o's kind; throws kvgate::Error when the text
// is not one (a bad number, byte count or address), before range checks.
OptionValue value_from_text(const Option& o, std::string_view text);
// The value as a TOML literal: true, 16, "16KiB", "127.0.0.1:8443".
std::string format_value(const Option& o, const OptionValue& v);
// "an integer", "a byte count (an integer or a string such as \"4GiB\")", ...
std::string_view kind_description(OptionKind kind);

// Rules between options (cert without key, plain and TLS listeners on one
// port); each problem names the option a user should change, and its
// message follows that option's name ("is set but tls.key_file is not").
struct ConfigProblem {
  const Option* option;
  std::string message;
};
std::vector<ConfigProblem> check_config(const ServerConfig& c);

}  // namespace kvgate::config
