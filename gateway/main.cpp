// kvgate: the hosted-LLM gateway's binary. See README.md for the commands.
#include <cstdio>
#include <exception>
#include <string>

#include "base/error.h"
#include "base/version.h"
#include "gateway/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kvgate: a prefix-caching LLM gateway with its own inference engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kvgate " + std::string(kvgate::build_version()));
  kvgate::cli::add_generate(app);
  kvgate::cli::add_tokenize(app);
  kvgate::cli::add_info(app);
  kvgate::cli::add_template(app);
  kvgate::cli::add_mkmodel(app);
  kvgate::cli::add_serve(app);
  kvgate::cli::add_route(app);
  kvgate::cli::add_bench_serve(app);
  kvgate::cli::add_sim(app);
  kvgate::cli::add_cache(app);
  // A word where a command goes that names none is an error, even beside
  // --help (which CLI11 would otherwise answer with the root help, exit 0).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) known |= sub->check_name(argv[1]);
    if (!known) {
      std::fprintf(stderr, "kvgate: error: unknown command '%s' (see kvgate --help)\n", argv[1]);
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kvgate::Error& e) {
    std::fprintf(stderr, "kvgate: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvgate: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
