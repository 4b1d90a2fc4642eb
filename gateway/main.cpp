// kvgate: the hosted-LLM gateway's binary. See README.md for the commands.
#include <cstdio>
#include <exception>

#include "base/error.h"
#include "gateway/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kvgate: a prefix-caching LLM gateway with its own inference engine"};
  app.require_subcommand(1);
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
