// kvgate route: the front over several `kvgate serve` replicas. It is a
// whole gateway at the edge (TLS, keys, quotas, tokenizing, the ledger: the
// same HttpApi and Pipeline as `kvgate serve`) whose EngineClient is the
// replicas (gateway/front/remote_engine.h) instead of an engine.
//
// It loads the model file for what the edge needs of it: the tokenizer, the
// chat template, the context length and the cache identity the replicas'
// block hashes must share (the weights' fingerprint with the KV element type
// and block size of [model]). It needs no KV cache of its own, so it has
// only the edge's flags (config_options.h, ServerCommand::kRoute): none of
// the engine's, its tiers' or a replica's.
//
// Stop order, on a signal: the server stops accepting and lets responses in
// flight finish until the shutdown deadline; what is left is cancelled at
// the replicas; the blocking pool writes every remaining ledger record.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "base/error.h"
#include "engine/kv_layout.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cli/commands.h"
#include "gateway/cli/server_start.h"
#include "gateway/config/config_toml.h"
#include "gateway/config/serve_flags.h"
#include "gateway/cluster/front/remote_engine.h"
#include "gateway/cluster/front/replica_set.h"
#include "gateway/cluster/front/route_metrics.h"
#include "gateway/openai/chat_template.h"
#include "gateway/server/server.h"
#include "gateway/admin/admin_api.h"
#include "gateway/serving/bootstrap.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/http_api.h"
#include "gateway/cluster/wire/internal_token.h"
#include "gateway/admin/metrics_api.h"
#include "gateway/serving/pipeline.h"
#include "gateway/serving/serving_metrics.h"
#include "tenancy/error.h"

namespace kvgate::cli {
namespace {

std::vector<std::string> replica_urls(const config::ServerConfig& c, const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  std::string_view rest = c.cluster.replicas;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (!one.empty()) out.emplace_back(one);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

void route(const config::ServerConfig& c, const std::vector<std::string>& replica_flags) {
  const sigset_t stop_signals = block_stop_signals();

  if (c.cluster.internal_token_file.empty())
    throw Error("kvgate route needs --internal-token-file: the secret its replicas are started with");
  const std::string internal_token = wire::read_internal_token(c.cluster.internal_token_file);
  prepare_data_dir(c);
  const std::unique_ptr<serving::AccessLog> access_log = open_access_log(c);  // outlives the pipeline

  auto model = load_served_model(c);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  openai::ChatTemplate chat =
      openai::ChatTemplate::for_model(model->file(), c.model.chat_template, c.model.tool_call_parser);
  const ModelConfig& mc = model->config();
  // The replicas' cache identity, which the front's chains must share.
  KvLayout layout;
  layout.type = kv_type_from_name(c.model.kv_type);
  cache::KvIdentity kv;
  kv.model = model_fingerprint(*model, layout);
  kv.n_layers = mc.n_layers;
  kv.n_kv_heads = mc.n_kv_heads;
  kv.head_dim = mc.head_dim;
  kv.kv_type = static_cast<uint8_t>(layout.type);
  kv.block_size = c.model.block_size;
  say("model " + c.served_model_name() + " (" + c.model.path + "), routing by blocks of " +
      std::to_string(kv.block_size) + " tokens, " + std::string(kv_type_name(layout.type)) + " K/V");
  say("chat template: " + chat.origin() + "; tool calls read as " +
      std::string(openai::tool_call_format_name(chat.tool_format())));

  front::ReplicaSetOptions ro;
  ro.urls = replica_urls(c, replica_flags);
  ro.ca_file = c.cluster.replica_ca;
  ro.token = internal_token;
  ro.health_interval = std::chrono::milliseconds(c.cluster.health_interval_ms);
  ro.mine = kv;
  ro.route_policy = c.cluster.router;
  front::ReplicaSet replicas(std::move(ro));
  say("routing with " + replicas.policy_name() + " over " + std::to_string(replicas.size()) + " replicas");
  for (size_t i = 0; i < replicas.size(); ++i) say("replica " + replicas.url(static_cast<route::ReplicaId>(i)));

  RequestBounds bounds;
  bounds.context_length = mc.context_length;
  bounds.vocab_size = tokenizer->n_vocab();
  bounds.block_size = kv.block_size;
  bounds.pool_blocks = std::numeric_limits<int32_t>::max();  // each replica's own, checked at start()
  std::optional<front::RemoteEngine> remote(std::in_place, replicas,
                                           c.model.prefix_cache ? std::optional(kv) : std::nullopt, bounds);

  serving::ServingMetrics metrics(c.served_model_name(), 0);
  front::RouteMetrics route_metrics(metrics.registry());
  tenancy::Tenancy tenancy(tenancy_dir(c), tenancy::SystemClock::instance(), response_limits(c));
  const StartSecrets secrets = start_secrets(tenancy, c);

  WorkPools pools;
  serving::Pipeline pipeline(*remote, tenancy, *tokenizer, *pools.billing, metrics, access_log.get());
  const serving::KvTiers no_tiers;  // the replicas' own
  admin::AdminApi admin(nullptr, tenancy, *pools.admin, secrets.admin, pipeline, *tokenizer, c.served_model_name(), no_tiers);
  admin::MetricsApi metrics_api(
      [&] {
        route_metrics.refresh(replicas);
        metrics.collect_ledger(tenancy);
      },
      metrics, tenancy, *pools.side, secrets.admin);
  serving::OutputGrammars grammars(*tokenizer);
  const serving::HttpApi api(pipeline, tenancy, *tokenizer, std::move(chat), grammars,
                             api_model(c, *model), *pools.side, routes_of(admin, metrics_api));

  auto authenticates = [&tenancy, &admin_token = secrets.admin](std::string_view authorization) {
    return serving::is_known_credential(authorization, tenancy, admin_token);
  };
  std::optional<server::Server> http(std::in_place, server_options(c, authenticates),
                                     [&api](server::HttpRequest r, server::Reply rep) { api(std::move(r), std::move(rep)); });
  http->start();
  announce_listener(c, *http, secrets.shown, c.served_model_name());

  wait_for_stop(stop_signals, c.server.shutdown_deadline_ms);
  http->stop(std::chrono::milliseconds(c.server.shutdown_deadline_ms));
  pools.drain_requests();
  remote->shutdown();     // cancels what is left at the replicas; each completion queues its ledger write
  pools.billing.reset();  // writes every record still queued, then joins
  http.reset();
  remote.reset();
  say("stopped; every finished request is in the ledger");
}

}  // namespace

void add_route(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("route", "Serve the OpenAI API over TLS in front of several kvgate serve replicas");
  auto flags = config::ServeFlags::add_to(*cmd, config::ServerCommand::kRoute);
  auto replicas = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--replica", *replicas, "a replica's https:// URL (repeat for each; adds to [cluster] replicas)")
      ->group("Config [cluster]");  // beside --replicas, which it adds to
  cmd->callback([flags, replicas] {
    const config::ServerConfig c = flags->resolve();
    if (flags->print_config()) {
      std::fputs(config::to_toml(c).c_str(), stdout);
      return;
    }
    try {
      route(c, *replicas);
    } catch (const tenancy::Error& e) {
      throw Error(std::string("tenancy: ") + e.what());
    }
  });
}

}  // namespace kvgate::cli
