// The kvgate binary's subcommands. Each registers itself on the app and runs
// when selected; errors reach main() as exceptions and become exit code 1.
#pragma once

#include <CLI/CLI.hpp>

namespace kvgate::cli {

void add_generate(CLI::App& app);
void add_tokenize(CLI::App& app);
void add_info(CLI::App& app);
void add_mkmodel(CLI::App& app);
void add_serve(CLI::App& app);
void add_route(CLI::App& app);
void add_bench_serve(CLI::App& app);
void add_sim(CLI::App& app);
void add_cache(CLI::App& app);
void add_template(CLI::App& app);

}  // namespace kvgate::cli
