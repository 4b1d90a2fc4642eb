// The command groups, one file each; each adds its subcommands to the root
// app, and their callbacks run the call through the Context.
#pragma once

#include <CLI/CLI.hpp>

#include "ops/kvgatectl/context.h"

namespace kvgatectl {

void add_tenants(CLI::App& app, Context& ctx);  // tenants list|show|create|update|disable|enable
void add_keys(CLI::App& app, Context& ctx);     // keys list|create|revoke|rotate
void add_quotas(CLI::App& app, Context& ctx);   // quotas show|set
void add_prices(CLI::App& app, Context& ctx);   // prices show|set
void add_policy(CLI::App& app, Context& ctx);   // policy show|set
void add_cache(CLI::App& app, Context& ctx);    // cache stats|evict|flush|pin
void add_usage(CLI::App& app, Context& ctx);    // usage report|export
void add_backup(CLI::App& app, Context& ctx);   // backup DIR

}  // namespace kvgatectl
