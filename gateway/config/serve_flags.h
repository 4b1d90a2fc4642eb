// ServeFlags: the flags of `kvgate serve` and `kvgate route`: --config FILE,
// --print-config, and one flag per config option the command uses
// (--listen, --model, --kv-budget, ...; a boolean also has --no-<flag>):
// `route` has none of the engine's (--kv-budget, --cuda-graphs, the KV
// tiers'), `serve` none of the front's (--router, --replicas).
// resolve() layers them: a flag given beats the file's value, which beats
// the default.
//
// The serving layer owns the subcommand; it calls add_to() while building
// the CLI and resolve() in the subcommand's callback:
//
//   auto flags = ServeFlags::add_to(*serve, ServerCommand::kServe);
//   serve->callback([flags] {
//     ServerConfig c = flags->resolve();
//     if (flags->print_config()) { std::fputs(to_toml(c).c_str(), stdout); return; }
//     ...
//   });
//
// Threads: CLI11 writes into the object while parsing on the main thread;
// resolve() reads it after. Keep the shared_ptr alive as long as the app.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gateway/config/config_options.h"
#include "gateway/config/server_config.h"

namespace kvgate::config {

class ServeFlags {
 public:
  // Registers the flags of `command`'s options on `cmd`, grouped by config
  // table in --help, each showing its default. Any other option's flag is
  // an unknown option to CLI11; the --config file may still set it.
  static std::shared_ptr<ServeFlags> add_to(CLI::App& cmd, ServerCommand command);

  // Defaults < the --config file < the flags given. Throws kvgate::Error
  // listing every problem, each naming its flag or file:line:column.
  ServerConfig resolve() const;

  bool print_config() const { return print_config_; }
  const std::string& config_file() const { return config_file_; }

  ServeFlags(const ServeFlags&) = delete;
  ServeFlags& operator=(const ServeFlags&) = delete;

 private:
  ServeFlags() = default;

  // One option's flag; CLI11 holds pointers into it, so `given_` is sized
  // once, before any is registered, and never grows.
  struct Given {
    const Option* option = nullptr;
    CLI::Option* cli = nullptr;  // null: the command has no flag for the option
    std::string text;   // every kind but kBool
    bool flag = false;  // kBool: --x is true, --no-x false
  };

  std::string config_file_;
  bool print_config_ = false;
  std::vector<Given> given_;
};

}  // namespace kvgate::config
