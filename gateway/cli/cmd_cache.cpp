// kvgate cache purge: deletes the disk tier's entries that the configured
// model can never restore (another model, block size or KV element type),
// or every entry with --all, with the server stopped. It reads the same
// configuration as `kvgate serve` (--config FILE and the same flags), so it
// finds the same <data.dir>/kv and computes the same cache identity. The
// running server has the same action at POST /admin/cache/purge.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "cache/tiers/disk_tier.h"
#include "engine/backend_registry.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/tier_identity.h"
#include "gateway/cli/commands.h"
#include "gateway/cli/server_start.h"
#include "gateway/config/serve_flags.h"

namespace kvgate::cli {
namespace {

// The identity `kvgate serve` would open the tiers with, from a backend
// holding a single block (its pool is not what matters here).
cache::KvIdentity configured_identity(const config::ServerConfig& c) {
  auto model = load_served_model(c);
  BackendOptions bo;
  bo.block_size = c.model.block_size;
  bo.kv_type = kv_type_from_name(c.model.kv_type);
  bo.kv_budget_bytes = kv_bytes_per_token(model->config(), bo.kv_type) * c.model.block_size;
  auto backend = make_backend(c.model.backend, model, bo);
  return tier_identity(*backend, model_fingerprint(*model, backend->kv_layout()));
}

}  // namespace

void add_cache(CLI::App& app) {
  CLI::App* cache = app.add_subcommand("cache", "Maintain the KV cache's disk tier (with the server stopped)");
  cache->require_subcommand(1);
  CLI::App* purge = cache->add_subcommand(
      "purge", "Delete disk-tier entries of another model, block size or KV element type than the configured one");
  auto flags = config::ServeFlags::add_to(*purge, config::ServerCommand::kServe);
  auto all = std::make_shared<bool>(false);
  purge->add_flag("--all", *all, "delete every entry, whatever its model");
  purge->callback([flags, all] {
    const config::ServerConfig c = flags->resolve();
    const std::string dir = c.kv_disk_path();
    if (!std::filesystem::exists(dir)) {
      std::printf("kvgate: no disk tier at %s: nothing to purge\n", dir.c_str());
      return;
    }
    int64_t n = 0;
    try {
      if (*all) {
        n = cache::purge_disk_tier(dir, nullptr);
      } else {
        const cache::KvIdentity keep = configured_identity(c);
        n = cache::purge_disk_tier(dir, &keep);
      }
    } catch (const std::runtime_error& e) {
      // RocksDB's lock on the tier: a server has it open.
      if (std::string_view(e.what()).find("lock") != std::string_view::npos)
        throw Error("the disk tier " + dir + " is locked: a server is running on it; use `kvgatectl cache purge` " +
                    "against that server, or stop it first (" + e.what() + ")");
      throw Error(e.what());
    }
    std::printf("kvgate: purged %lld blocks from %s%s\n", static_cast<long long>(n), dir.c_str(),
                *all ? "" : " (those of another model or KV layout)");
  });
}

}  // namespace kvgate::cli
