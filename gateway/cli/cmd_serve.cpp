// kvgate serve: the TLS gateway speaking the OpenAI API in front of the
// engine. With no arguments it serves the bundled model from a data
// directory under the working directory; at first start it makes a demo
// tenant, its API key and the admin token and prints them once.
//
// Start-up order: block SIGINT/SIGTERM (so only sigwait sees them, in every
// thread started after), load the model, size the KV cache, open the KV
// tiers below it (the disk tier's index is rebuilt here), start the
// engine, open tenancy, make the first-start secrets, bind the listeners.
// Stop order, on a signal: the server stops accepting and lets responses in
// flight finish until the shutdown deadline (clients that go away cancel
// their requests); the engine cancels what is left; the blocking pool
// writes every remaining ledger record; then everything is torn down.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/engine.h"
#include "engine/sched/tier_identity.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cli/commands.h"
#include "gateway/cli/server_start.h"
#include "gateway/config/config_toml.h"
#include "gateway/config/serve_flags.h"
#include "gateway/openai/chat_template.h"
#include "gateway/server/server.h"
#include "gateway/admin/admin_api.h"
#include "gateway/cluster/replica/block_event_publisher.h"
#include "gateway/serving/bootstrap.h"
#include "gateway/serving/http_api.h"
#include "gateway/cluster/replica/internal_api.h"
#include "gateway/cluster/wire/internal_token.h"
#include "gateway/serving/kv_tiers.h"
#include "gateway/admin/metrics_api.h"
#include "gateway/serving/serving_metrics.h"
#include "gateway/serving/pipeline.h"
#include "policies/eviction/policy_registry.h"
#include "tenancy/error.h"

namespace kvgate::cli {
namespace {

std::string capacity_line(const Backend& be, const ModelConfig& mc) {
  const KvCapacity& cap = be.kv_capacity();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "backend %s, KV cache %lld tokens (%d blocks of %d, %s, %.1f MiB), maximum concurrency %.2fx for "
                "%d-token requests",
                std::string(be.name()).c_str(), static_cast<long long>(cap.tokens()), cap.num_blocks, cap.block_size,
                std::string(kv_type_name(be.kv_layout().type)).c_str(), static_cast<double>(cap.bytes()) / 1048576.0,
                static_cast<double>(cap.tokens()) / mc.context_length, mc.context_length);
  return buf;
}

void serve(const config::ServerConfig& c) {
  const sigset_t stop_signals = block_stop_signals();

  // A replica's token is checked before anything slow: a bad file fails the start at once.
  std::optional<std::string> internal_token;
  if (!c.cluster.internal_token_file.empty()) internal_token = wire::read_internal_token(c.cluster.internal_token_file);

  std::filesystem::create_directories(c.data.dir);
  auto model = Model::load(c.model.path);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  const ModelConfig& mc = model->config();
  BackendOptions bo;
  bo.block_size = c.model.block_size;
  bo.kv_budget_bytes = c.model.kv_budget_bytes;
  bo.kv_type = kv_type_from_name(c.model.kv_type);
  bo.memory_utilization = c.model.gpu_memory_percent / 100.0;
  bo.device_graphs = c.model.cuda_graphs;
  auto backend = make_backend(c.model.backend, model, bo);
  say("model " + c.served_model_name() + " (" + c.model.path + ", " + std::to_string(mc.n_layers) + " layers, dim " +
      std::to_string(mc.dim) + ", context " + std::to_string(mc.context_length) + ")");
  say(capacity_line(*backend, mc));
  serving::ServingMetrics metrics(c.served_model_name(), backend->kv_capacity().bytes());

  SchedulerOptions so;
  so.model = model_fingerprint(*model, backend->kv_layout());
  so.prefix_cache = c.model.prefix_cache;
  so.policy = policies::make_eviction_policy(policies::parse_policy_spec(c.model.eviction_policy));  // checked with the config
  so.eos = tokenizer->eos();
  so.max_step_tokens = c.model.max_step_tokens;
  so.max_running = c.model.max_running;
  so.chunked_prefill = c.model.chunked_prefill;
  // Below the device pool: opened before the engine starts, closed after it stops.
  const cache::KvIdentity kv_identity = tier_identity(*backend, so.model);
  // The block events outlive the tiers and the engine that tell them.
  std::optional<replica::BlockEventPublisher> events;
  if (!c.cluster.block_events.empty()) {
    events.emplace(replica::BlockEventPublisherOptions{.endpoint = c.cluster.block_events, .identity = kv_identity});
    so.block_events = &*events;
    say("block events on " + events->endpoint());
  }
  const serving::KvTiers tiers = serving::open_kv_tiers(c, kv_identity, events ? &*events : nullptr);
  for (const std::string& line : serving::describe(tiers, kv_identity)) say(line);
  so.tiers = tiers.lower();
  metrics.watch(tiers);
  const int64_t running = c.model.max_running > 0 ? c.model.max_running : c.model.max_step_tokens;
  Engine engine(std::move(backend), std::move(so), {.max_outstanding = running + c.model.max_waiting});

  tenancy::Tenancy tenancy((std::filesystem::path(c.data.dir) / "tenancy").string());
  const serving::FirstStartSecrets secrets = serving::bootstrap(tenancy, c.admin_token_path());
  announce_secrets(secrets);
  const std::optional<serving::AdminToken> token = serving::AdminToken::load(c.admin_token_path());
  if (!token) throw Error(c.admin_token_path() + ": the admin token file disappeared at start-up");

  std::optional<serving::BlockingPool> durable(std::in_place, 2);
  serving::Pipeline pipeline(engine, tenancy, *tokenizer, *durable, metrics);
  admin::AdminApi admin(&engine, tenancy, *durable, *token, pipeline, *tokenizer, c.served_model_name(), tiers);
  admin::MetricsApi metrics_api([&] { metrics.collect(engine); }, metrics, tenancy, *durable, *token);
  std::optional<replica::InternalApi> internal;
  if (internal_token) {
    internal.emplace(engine, wire::InternalToken(*internal_token), c.served_model_name(), kv_identity,
                     events ? events->endpoint() : std::string(), events ? &*events : nullptr);
    say("replica of a route front (internal token from " + c.cluster.internal_token_file + ")");
  }
  std::vector<server::Mount> mounts = routes_of(admin, metrics_api);
  if (internal) mounts.push_back({"/internal", [&internal](const server::HttpRequest& r, server::Reply& rep) { (*internal)(r, rep); }});
  serving::ApiModel served = api_model(c, mc);
  served.replica_only = internal.has_value();
  const serving::HttpApi api(pipeline, tenancy, *tokenizer, openai::ChatTemplate::from_gguf(model->file()),
                             std::move(served), std::move(mounts));

  std::optional<server::Server> http(std::in_place, server_options(c),
                                     [&api](server::HttpRequest r, server::Reply rep) { api(std::move(r), std::move(rep)); });
  http->start();
  // A listener of its own for the scraper, plain HTTP and /metrics only.
  std::optional<server::Server> metrics_http;
  if (!c.metrics.listen.empty()) {
    const config::ListenAddress at = config::parse_listen_address(c.metrics.listen);
    server::ServerOptions o = server_options(c);
    o.address = at.host;
    o.https = false;
    o.http_port = at.port;
    metrics_http.emplace(std::move(o), metrics_api.open_listener());
    metrics_http->start();
    say("metrics on http://" + at.host + ":" + std::to_string(*metrics_http->http_port()) + "/metrics");
  } else {
    say("metrics on https://" + c.server.listen.host + ":" + std::to_string(*http->https_port()) +
        "/metrics (admin token)");
  }
  announce_listener(c, *http, secrets, c.served_model_name());

  wait_for_stop(stop_signals, c.server.shutdown_deadline_ms);
  if (metrics_http) metrics_http->stop(std::chrono::milliseconds(0));
  http->stop(std::chrono::milliseconds(c.server.shutdown_deadline_ms));
  engine.shutdown();  // cancels what is left; each completion queues its ledger write
  durable.reset();    // writes every record still queued, then joins
  http.reset();       // nothing calls a Reply any more
  metrics_http.reset();
  say("stopped; every finished request is in the ledger");
}

}  // namespace

void add_serve(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI API over TLS in front of the engine");
  auto flags = config::ServeFlags::add_to(*cmd);
  cmd->callback([flags] {
    const config::ServerConfig c = flags->resolve();
    if (flags->print_config()) {
      std::fputs(config::to_toml(c).c_str(), stdout);
      return;
    }
    try {
      serve(c);
    } catch (const tenancy::Error& e) {  // the data directory's store
      throw Error(std::string("tenancy: ") + e.what());
    }
  });
}

}  // namespace kvgate::cli
