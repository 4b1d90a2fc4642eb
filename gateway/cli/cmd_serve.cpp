// kvgate serve: the TLS gateway speaking the OpenAI API in front of the
// engine. With no arguments it serves the bundled model from a data
// directory under the working directory; at first start it makes a demo
// tenant, its API key and the admin token and prints them once.
//
// Start-up order: block SIGINT/SIGTERM (so only sigwait sees them, in every
// thread started after), load the model, size the KV cache and the tiers
// below it (as configured, or "auto" from the model and the free memory and
// disk: serving/kv_sizes.h), make the backend and its pool, open the KV
// tiers (the disk tier's index is rebuilt here), start the
// engine, open tenancy, make the first-start secrets, bind the listeners.
// Stop order, on a signal: the server stops accepting and lets responses in
// flight finish until the shutdown deadline (clients that go away cancel
// their requests); the engine cancels what is left; the blocking pool
// writes every remaining ledger record; then everything is torn down.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/model/weight_summary.h"
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
#include "gateway/serving/credentials.h"
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

// The pool the backend made and the requests it can run at once: the
// smaller of what the KV cache holds in full-context requests and what
// max_running lets run (the scheduler's limit, not the memory's).
std::string capacity_line(const Backend& be, const ModelConfig& mc, const config::ModelSection& m,
                          const BackendChoice& where) {
  const KvCapacity& cap = be.kv_capacity();
  const double kv_holds = static_cast<double>(cap.tokens()) / mc.context_length;
  const int32_t running = serving::effective_max_running(m);
  char buf[320];
  std::snprintf(buf, sizeof buf, "backend %s, KV cache %lld tokens (%d blocks of %d, %s, %.1f MiB of %s memory), ",
                std::string(be.name()).c_str(), static_cast<long long>(cap.tokens()), cap.num_blocks, cap.block_size,
                std::string(kv_type_name(be.kv_layout().type)).c_str(), static_cast<double>(cap.bytes()) / 1048576.0,
                where.kv_pool_in_host_memory ? "host" : "device");
  std::string line = buf;
  if (running <= kv_holds)
    std::snprintf(buf, sizeof buf,
                  "maximum concurrency %dx for %d-token requests (max_running; the KV cache alone would hold %.2fx)",
                  running, mc.context_length, kv_holds);
  else
    std::snprintf(buf, sizeof buf,
                  "maximum concurrency %.2fx for %d-token requests (the KV cache; max_running would allow %d)",
                  kv_holds, mc.context_length, running);
  return line + buf;
}

// The model, its tokenizer and the backend that will run it (the slow part
// of a start), announced as they are ready.
struct LoadedModel {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Backend> backend;  // until the Engine takes it
  std::optional<openai::ChatTemplate> chat;
  serving::KvSizes sizes;  // the KV budget and the tiers' capacities, and why
};

LoadedModel load_model(const config::ServerConfig& c) {
  LoadedModel m;
  m.model = load_served_model(c);
  m.tokenizer = Tokenizer::from_gguf(m.model->file());
  // Before the slow part: a bad template or tool_call_parser fails at once.
  m.chat.emplace(openai::ChatTemplate::for_model(m.model->file(), c.model.chat_template, c.model.tool_call_parser));
  const ModelConfig& mc = m.model->config();
  say("model " + c.served_model_name() + " (" + c.model.path + ", " + std::to_string(mc.n_layers) + " layers, dim " +
      std::to_string(mc.dim) + ", context " + std::to_string(mc.context_length) + "), weights " +
      summarize_weights(m.model->file()).text());
  const BackendChoice where = choose_backend(c.model.backend);
  m.sizes = serving::choose_kv_sizes(c, mc, where.kv_pool_in_host_memory, serving::MachineRoom::measure(c));
  say(m.sizes.budget_line());
  BackendOptions bo;
  bo.block_size = c.model.block_size;
  bo.kv_budget_bytes = m.sizes.kv_budget.bytes;
  bo.kv_type = kv_type_from_name(c.model.kv_type);
  bo.memory_utilization = m.sizes.gpu_memory_percent / 100.0;
  bo.device_graphs = c.model.cuda_graphs;
  m.backend = make_backend(where.name, m.model, bo);
  say(capacity_line(*m.backend, mc, c.model, where));
  say("chat template: " + m.chat->origin() + "; tool calls read as " +
      std::string(openai::tool_call_format_name(m.chat->tool_format())));
  return m;
}

// The scheduler's options from [model]; the tiers and the block events are
// added once they are open.
SchedulerOptions scheduler_options(const config::ServerConfig& c, const LoadedModel& m) {
  SchedulerOptions so;
  so.model = model_fingerprint(*m.model, m.backend->kv_layout());
  so.prefix_cache = c.model.prefix_cache;
  so.policy = policies::make_eviction_policy(policies::parse_policy_spec(c.model.eviction_policy));  // checked with the config
  so.eos = m.tokenizer->eos();
  so.max_step_tokens = c.model.max_step_tokens;
  so.max_running = c.model.max_running;
  so.chunked_prefill = c.model.chunked_prefill;
  so.max_pinned_percent = c.model.max_pinned_percent;
  so.tenant_pinned_percent = c.model.tenant_pinned_percent;
  return so;
}

EngineOptions engine_options(const config::ServerConfig& c) {
  const int64_t running = c.model.max_running > 0 ? c.model.max_running : c.model.max_step_tokens;
  return {.max_outstanding = running + c.model.max_waiting};
}

// The block events a route front reads, when [cluster] block_events names
// where to publish them; nullptr otherwise.
std::unique_ptr<replica::BlockEventPublisher> publish_block_events(const config::ServerConfig& c,
                                                                   const std::optional<std::string>& internal_token,
                                                                   const cache::KvIdentity& identity) {
  if (c.cluster.block_events.empty()) return nullptr;
  // The config check makes block events need the token: their keys come from it.
  auto events = std::make_unique<replica::BlockEventPublisher>(replica::BlockEventPublisherOptions{
      .endpoint = config::block_events_endpoint(c.cluster.block_events),
      .keys = wire::event_curve_keys(internal_token.value()),
      .identity = identity});
  say("block events on " + events->endpoint());
  return events;
}

serving::KvTiers open_tiers(const config::ServerConfig& c, const serving::KvSizes& sizes,
                            const cache::KvIdentity& identity, replica::BlockEventPublisher* events) {
  serving::KvTiers tiers = serving::open_kv_tiers(c, sizes, identity, events);
  for (const std::string& line : serving::describe(tiers, sizes, identity)) say(line);
  return tiers;
}

// A replica's internal routes, when [cluster] internal_token_file makes this
// server one (`token` is that file's, read first); nullptr otherwise.
std::unique_ptr<replica::InternalApi> replica_api(const config::ServerConfig& c, const std::optional<std::string>& token,
                                                  Engine& engine, const cache::KvIdentity& identity,
                                                  replica::BlockEventPublisher* events,
                                                  serving::OutputGrammars& grammars) {
  if (!token) return nullptr;
  auto api = std::make_unique<replica::InternalApi>(engine, wire::InternalToken(*token), c.served_model_name(), identity,
                                                    events ? events->endpoint() : std::string(), events, &grammars);
  say("replica of a route front (internal token from " + c.cluster.internal_token_file + ")");
  return api;
}

// The operator's routes, and a replica's under /internal.
std::vector<server::Mount> mounts_of(admin::AdminApi& admin, admin::MetricsApi& metrics_api,
                                     replica::InternalApi* internal) {
  std::vector<server::Mount> mounts = routes_of(admin, metrics_api);
  if (internal)
    mounts.push_back({"/internal", [internal](const server::HttpRequest& r, server::Reply& rep) { (*internal)(r, rep); }});
  return mounts;
}

// /metrics for the scraper: on a plain-HTTP listener of its own when
// [metrics] listen names one (returned, started), else on the API listener
// behind the admin token (nullptr).
std::unique_ptr<server::Server> start_metrics_listener(const config::ServerConfig& c, admin::MetricsApi& metrics_api,
                                                       const server::Server& http) {
  const std::string api = "https://" + c.server.listen.host + ":" + std::to_string(*http.https_port());
  say("dashboard on " + api + "/dashboard (an API key shows its tenant, the admin token every tenant)");
  if (c.metrics.listen.empty()) {
    say("metrics on " + api + "/metrics (admin token)");
    return nullptr;
  }
  const config::ListenAddress at = config::parse_listen_address(c.metrics.listen);
  server::ServerOptions o = server_options(c);
  o.address = at.host;
  o.https = false;
  o.http_port = at.port;
  auto listener = std::make_unique<server::Server>(std::move(o), metrics_api.open_listener());
  listener->start();
  say("metrics on http://" + at.host + ":" + std::to_string(*listener->http_port()) + "/metrics");
  return listener;
}

void serve(const config::ServerConfig& c) {
  const sigset_t stop_signals = block_stop_signals();
  // A replica's token is checked before anything slow: a bad file fails the start at once.
  std::optional<std::string> internal_token;
  if (!c.cluster.internal_token_file.empty()) internal_token = wire::read_internal_token(c.cluster.internal_token_file);
  prepare_data_dir(c);
  const std::unique_ptr<serving::AccessLog> access_log = open_access_log(c);  // outlives the pipeline

  LoadedModel m = load_model(c);
  serving::ServingMetrics metrics(c.served_model_name(), m.backend->kv_capacity().bytes());
  SchedulerOptions so = scheduler_options(c, m);
  // Below the device pool: opened before the engine starts, closed after it stops.
  const cache::KvIdentity kv_identity = tier_identity(*m.backend, so.model);
  // The block events outlive the tiers and the engine that tell them.
  const std::unique_ptr<replica::BlockEventPublisher> events = publish_block_events(c, internal_token, kv_identity);
  so.block_events = events.get();
  const serving::KvTiers tiers = open_tiers(c, m.sizes, kv_identity, events.get());
  so.tiers = tiers.lower();
  metrics.watch(tiers);
  Engine engine(std::move(m.backend), std::move(so), engine_options(c));

  tenancy::Tenancy tenancy(tenancy_dir(c), tenancy::SystemClock::instance(), response_limits(c));
  const StartSecrets secrets = start_secrets(tenancy, c);

  WorkPools pools;
  serving::Pipeline pipeline(engine, tenancy, *m.tokenizer, *pools.billing, metrics, access_log.get());
  admin::AdminApi admin(&engine, tenancy, *pools.admin, secrets.admin, pipeline, *m.tokenizer, c.served_model_name(), tiers);
  admin::MetricsApi metrics_api(
      [&] {
        metrics.collect(engine);
        metrics.collect_ledger(tenancy);
      },
      metrics, tenancy, *pools.side, secrets.admin);
  serving::OutputGrammars grammars(*m.tokenizer);
  const std::unique_ptr<replica::InternalApi> internal =
      replica_api(c, internal_token, engine, kv_identity, events.get(), grammars);
  serving::ApiModel served = api_model(c, *m.model);
  served.replica_only = internal != nullptr;
  const serving::HttpApi api(pipeline, tenancy, *m.tokenizer, std::move(*m.chat), grammars,
                             std::move(served), *pools.side, mounts_of(admin, metrics_api, internal.get()));

  // A credential some route takes: a tenant's key, the admin token, or the front's internal token.
  std::optional<wire::InternalToken> front;
  if (internal_token) front.emplace(*internal_token);
  auto authenticates = [&tenancy, &admin_token = secrets.admin, &front](std::string_view authorization) {
    if (serving::is_known_credential(authorization, tenancy, admin_token)) return true;
    const std::optional<std::string_view> presented = serving::bearer_token(authorization);
    return front && presented && front->matches(*presented);
  };
  std::optional<server::Server> http(std::in_place, server_options(c, authenticates),
                                     [&api](server::HttpRequest r, server::Reply rep) { api(std::move(r), std::move(rep)); });
  http->start();
  std::unique_ptr<server::Server> metrics_http = start_metrics_listener(c, metrics_api, *http);
  announce_listener(c, *http, secrets.shown, c.served_model_name());

  wait_for_stop(stop_signals, c.server.shutdown_deadline_ms);
  if (metrics_http) metrics_http->stop(std::chrono::milliseconds(0));
  http->stop(std::chrono::milliseconds(c.server.shutdown_deadline_ms));
  pools.drain_requests();
  engine.shutdown();      // cancels what is left; each completion queues its ledger write
  pools.billing.reset();  // writes every record still queued, then joins
  http.reset();       // nothing calls a Reply any more
  metrics_http.reset();
  say("stopped; every finished request is in the ledger");
}

}  // namespace

void add_serve(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI API over TLS in front of the engine");
  auto flags = config::ServeFlags::add_to(*cmd, config::ServerCommand::kServe);
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
