// What every command shares: the global flags (--server, --token-file,
// --cacert, --insecure, --json, --timeout) and the AdminClient made from
// them on first use, so `--help` and usage errors never need a token.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "ops/kvgatectl/admin_client.h"

namespace kvgatectl {

class Context {
 public:
  // Adds the global flags to the root app.
  void add_flags(CLI::App& app);

  // The admin API client; a usage error when the token cannot be found.
  const AdminClient& admin();
  bool json() const { return json_; }

 private:
  std::string server_ = "https://127.0.0.1:8443";
  std::string token_file_;
  std::string cacert_;
  bool insecure_ = false;
  bool json_ = false;
  double timeout_s_ = 30;
  std::unique_ptr<AdminClient> admin_;
};

}  // namespace kvgatectl
