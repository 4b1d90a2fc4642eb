// backup DIR: a checkpoint of the server's tenancy store (tenants, keys,
// plans, the ledger) taken while it serves, written by the server into DIR
// on its own machine (POST /admin/backup). DIR must not exist yet.
#include <iostream>
#include <memory>
#include <string>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"

namespace kvgatectl {

void add_backup(CLI::App& app, Context& ctx) {
  auto dir = std::make_shared<std::string>();
  CLI::App* c = app.add_subcommand(
      "backup", "back up the server's tenancy store (tenants, keys, plans, the ledger) while it serves: the server "
                "writes a RocksDB checkpoint into DIR on its own machine");
  c->add_option("dir", *dir, "a directory that does not exist yet, as an absolute path on the server's machine")
      ->required();
  c->callback([&ctx, dir] {
    // The server resolves nothing against our working directory: say so here, before the call.
    if (dir->empty() || dir->front() != '/')
      throw usage_error("DIR must be an absolute path on the server's machine (got '" + *dir + "')");
    const boost::json::value v = ctx.admin().post("/admin/backup", boost::json::object{{"dir", *dir}});
    if (ctx.json()) return print_json(std::cout, v);
    const boost::json::object& o = v.as_object();
    std::cout << "backed up the tenancy store to " << cell(o, "dir") << " on the server's machine (" << cell(o, "files")
              << " files, " << cell(o, "bytes") << " bytes, schema version " << cell(o, "schema_version") << ")\n";
  });
}

}  // namespace kvgatectl
