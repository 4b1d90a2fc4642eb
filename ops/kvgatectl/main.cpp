// kvgatectl: the admin CLI of a kvgate server, over its HTTPS admin API.
// Exit status: 0 ok, 1 the server said no, 2 usage error, 3 cannot reach
// the server (connection, TLS, timeout), 4 the admin token was refused.
#include <cstdio>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/context.h"

namespace {

// Every subcommand's --help names the global flags, which live on the root.
void add_global_footer(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->footer("Global flags, anywhere on the line: --server URL, --token-file FILE, --cacert FILE, --insecure, "
                "--json, --timeout SECONDS (kvgatectl --help).");
    add_global_footer(*sub);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kvgatectl;
  CLI::App app{"kvgatectl: administer a kvgate server (tenants, keys, quotas, prices, cache policy, cache, usage, backup) "
               "through its HTTPS admin API.\nExit status: 0 ok, 1 the server said no, 2 usage error, 3 cannot "
               "reach the server, 4 the admin token was refused.",
               "kvgatectl"};
  app.fallthrough();  // global flags may come after the subcommand, e.g. `tenants list --json`
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("kvgatectl: error: ") + e.what() + "\nRun with --help for more information.\n";
  });
  Context ctx;
  ctx.add_flags(app);
  add_tenants(app, ctx);
  add_keys(app, ctx);
  add_quotas(app, ctx);
  add_prices(app, ctx);
  add_policy(app, ctx);
  add_cache(app, ctx);
  add_usage(app, ctx);
  add_backup(app, ctx);
  add_global_footer(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // --help prints the help and is 0
    return code == 0 ? kOk : kUsage;
  } catch (const CliError& e) {
    std::cout.flush();
    std::fprintf(stderr, "kvgatectl: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "kvgatectl: error: %s\n", e.what());
    return kRefused;
  }
  return kOk;
}
