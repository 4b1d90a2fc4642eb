// ServerConfig: every option of `kvgate serve`, grouped as the TOML file
// groups them ([server], [tls], [model], [limits], [data], [admin], [log]).
// A default-constructed ServerConfig is the embedded default: `kvgate serve`
// with no arguments (docs/gateway.md, "Configuration", lists every option).
//
// Invariants: a ServerConfig that load_config(), parse_config() or
// ServeFlags::resolve() returned has passed every range and cross-option
// check in config_options.cpp; a default one passes them too (a test holds
// it). Zero in a field documented as "0 = X" means X, never "none";
// kAutoBytes in a byte count that may be "auto" is a size the server
// chooses at start (below).
//
// Threads: a plain value; build it on one thread, then share it as const.
#pragma once

#include <cstdint>
#include <string>

#include "gateway/config/listen_address.h"

namespace kvgate::config {

// A byte count left to the server: "auto" in the file and on the command
// line. `kvgate serve` sizes it at start from the model and what the machine
// has free, and prints what it chose and why (gateway/serving/kv_sizes.h).
inline constexpr int64_t kAutoBytes = -1;

// [server]: the listeners, the I/O threads and what one connection may cost.
struct ServerSection {
  ListenAddress listen{"127.0.0.1", 8443};        // the HTTPS listener
  bool plain_http = false;                        // also serve plain HTTP (off unless asked for)
  ListenAddress plain_listen{"127.0.0.1", 8080};  // the plain HTTP listener, when plain_http
  int32_t io_threads = 1;                         // threads running the Asio io_context
  int32_t max_connections = 4096;                 // open connections; more are refused at accept
  int32_t max_connections_per_address = 1024;     // served from one IP at once (0: no such limit)
  int64_t unauthenticated_body_bytes = 64 * 1024;  // a body before a request has shown a valid key (413 past it)
  int64_t unauthenticated_idle_ms = 5'000;        // a connection that has shown no valid key, waiting for a request
  int64_t header_limit_bytes = 16 * 1024;         // a request's header block (431 past it)
  int64_t body_limit_bytes = 4 * 1024 * 1024;     // a request's body (413 past it)
  int64_t read_timeout_ms = 30'000;               // to receive one whole request once it starts (408)
  int64_t idle_timeout_ms = 60'000;               // a keep-alive connection waiting for its next request
  int64_t write_timeout_ms = 30'000;              // a response write that makes no progress: drop the client
  int64_t shutdown_deadline_ms = 10'000;          // after SIGTERM, time for requests in flight to finish

  bool operator==(const ServerSection&) const = default;
};

// [tls]: both files or neither; neither = a self-signed certificate the
// server generates once into the data directory (see tls_*_path below).
struct TlsSection {
  std::string cert_file;  // PEM certificate chain
  std::string key_file;   // PEM private key

  bool operator==(const TlsSection&) const = default;
};

// [model]: what is served and how the engine holds it.
struct ModelSection {
  std::string path = bundled_model_path();  // GGUF file
  std::string name;                         // the model id clients send; empty = file name without .gguf
  std::string chat_template;                // a Jinja file to render chats with; empty = the model's own
  std::string tool_call_parser = "auto";    // auto (the template's) | hermes | llama3 | mistral | deepseek | generic
  std::string backend = "auto";             // auto | cpu | cuda
  int32_t block_size = 16;                  // tokens per KV block (the prefix cache shares whole blocks)
  int64_t kv_budget_bytes = kAutoBytes;     // KV cache memory ("1GiB" in the file), or auto
  std::string kv_type = "f32";              // K/V element type: f32 | f16 | bf16 (either backend)
  // A GPU backend's share of its device's memory in percent (vLLM's
  // gpu_memory_utilization x 100): the KV pool gets what is left of it after
  // the weights, capped by kv_budget. 0: kv_budget alone.
  int32_t gpu_memory_percent = 0;
  bool cuda_graphs = true;                  // a GPU backend replays decode steps as CUDA graphs
  int32_t max_step_tokens = 512;            // tokens per forward pass (decodes + prefill chunks)
  int32_t max_running = 256;                // sequences running at once; 0 = as many as the KV budget holds
  bool chunked_prefill = true;              // split long prompts across steps
  bool prefix_cache = true;                 // share cached prefix blocks within a tenant's scope
  std::string eviction_policy = "lru";      // the device tier's policy, "name[:key=value,...]" (docs/policies.md)
  // Pinned blocks cannot be evicted: all pins together may hold at most
  // max_pinned_percent of the device pool, and each tenant's pins
  // tenant_pinned_percent (docs/security.md).
  int32_t max_pinned_percent = 50;
  int32_t tenant_pinned_percent = 10;
  int32_t max_waiting = 256;                // requests queued for the engine; past it, 503

  // `$KVGATE_SHARED/models/stories260K.gguf` when KVGATE_SHARED is set,
  // else `../shared/models/stories260K.gguf` (relative to the working
  // directory: the shared folder beside the checkout, where ops/run runs).
  static std::string bundled_model_path();

  bool operator==(const ModelSection&) const = default;
};

// [limits]: per-request bounds checked at the edge, before engine work.
struct LimitsSection {
  int32_t max_prompt_tokens = 0;  // 0 = the model's context
  int32_t max_output_tokens = 0;  // the largest max_tokens a request may ask for; 0 = the model's context
  // The shortest prefix a cache_control breakpoint writes and pins, as
  // Anthropic's minimum cacheable length (docs/caching-apis.md).
  int32_t min_cache_breakpoint_tokens = 1024;

  bool operator==(const LimitsSection&) const = default;
};

// [kv_tiers]: where KV blocks go below the device pool (docs/kv-tiers.md):
// host memory, then a RocksDB database under <data.dir>/kv. Each tier has
// its own capacity (auto by default) and eviction policy; 0 bytes leaves
// the tier out.
struct KvTiersSection {
  int64_t host_bytes = kAutoBytes;
  std::string host_policy = "lru";
  int64_t disk_bytes = kAutoBytes;
  std::string disk_policy = "lru";
  // A disk tier that will not open: renamed to <dir>.corrupt-<time> and a
  // fresh one made, instead of refusing to start.
  bool move_aside_corrupt = false;
  // A Redis server every replica shares ("host:port"; empty: none), below
  // the disk tier or, with redis_mode "instead_of_disk", in its place.
  // Redis's own maxmemory policy is its capacity; redis_ttl_s > 0 also
  // expires each block that long after its last write.
  std::string redis;
  std::string redis_mode = "below_disk";
  int32_t redis_timeout_ms = 50;
  int32_t redis_ttl_s = 0;
  // The cluster key every record in Redis is sealed under and named by
  // (cache/tiers/redis_seal.h): required with `redis`.
  std::string redis_key_file;
  // AUTH: the ACL user (empty: the default user) and a file holding the
  // password (empty: no AUTH).
  std::string redis_user;
  std::string redis_password_file;

  bool operator==(const KvTiersSection&) const = default;
};

// [data]: where the server keeps its state (tenants, ledger, keys, certificate).
struct DataSection {
  std::string dir = "kvgate-data";  // relative paths are relative to the working directory
  // The Responses API's stored responses (tenancy/response_store.h): how
  // long one is kept, and how many a tenant keeps (storing one more drops
  // its oldest).
  int32_t response_retention_days = 30;
  int32_t responses_per_tenant = 10000;

  bool operator==(const DataSection&) const = default;
};

// [admin]: the admin token is generated by the server at first start;
// the config only names where it is stored.
struct AdminSection {
  std::string token_file;  // empty = <data.dir>/admin-token
  // At a start that makes secrets (the first, or one after the token file
  // was deleted): write them to this new file (mode 0600; an existing one
  // stops the start) instead of stdout, which a supervisor keeps in its
  // journal. Empty = stdout.
  std::string print_secrets_to;

  bool operator==(const AdminSection&) const = default;
};

// [metrics]: where GET /metrics is served (docs/metrics.md).
struct MetricsSection {
  // Empty: on the API listener, behind the admin token. "host:port": on a
  // plain-HTTP listener of its own that serves /metrics and /health only,
  // without a token, for a scraper on a private network.
  std::string listen;

  bool operator==(const MetricsSection&) const = default;
};

// [cluster]: this server as one replica of several behind `kvgate route`.
// [cluster] block_events as ZeroMQ binds it: a bare port is loopback.
std::string block_events_endpoint(const std::string& configured);

struct ClusterSection {
  // A ZeroMQ endpoint to bind ("tcp://host:port", "ipc://path", or a bare
  // port for loopback: block_events_endpoint()) on which the block events
  // of every KV tier are published for the route front, encrypted and
  // open only to a holder of the internal token below, which they need
  // (docs/architecture.md, "Several machines"); empty = none.
  std::string block_events;
  // A file holding the secret a route front presents to this replica
  // (at least 32 printable characters, no spaces; one trailing newline is
  // allowed). Set: this server is a replica, serving the /internal/ routes
  // to that front only and refusing tenants' generation routes (403), whose
  // quotas and billing are the front's. Empty = not a replica.
  std::string internal_token_file;
  // The rest is `kvgate route`'s, the front (which presents the token
  // above): its replicas' URLs, comma-separated
  // ("https://10.0.0.1:8443,https://10.0.0.2:8443"); --replica adds one.
  std::string replicas;
  // A PEM bundle the replicas' certificates chain to; empty = the system's.
  std::string replica_ca;
  // The route policy: cache_aware, round_robin or random, with parameters
  // (gateway/route/route_policy.h).
  std::string router = "cache_aware";
  // How often each replica is asked whether it is up and what it is.
  int64_t health_interval_ms = 500;

  bool operator==(const ClusterSection&) const = default;
};

// [log]
struct LogSection {
  std::string level = "info";  // error | warn | info | debug
  // Append one line per generation request to this file (time, request id,
  // tenant, status, tokens, latency; never the prompt or the output;
  // gateway/serving/access_log.h). Empty = no access log.
  std::string access_log;

  bool operator==(const LogSection&) const = default;
};

struct ServerConfig {
  ServerSection server;
  TlsSection tls;
  ModelSection model;
  LimitsSection limits;
  KvTiersSection kv_tiers;
  DataSection data;
  AdminSection admin;
  MetricsSection metrics;
  ClusterSection cluster;
  LogSection log;

  // Where derived paths land, so the serving layer and the docs agree.
  std::string admin_token_path() const;
  // The self-signed pair used when [tls] names no files.
  bool self_signed() const { return tls.cert_file.empty(); }
  std::string tls_cert_path() const;  // tls.cert_file, or <data.dir>/tls/self-signed.crt
  std::string tls_key_path() const;   // tls.key_file, or <data.dir>/tls/self-signed.key
  std::string kv_disk_path() const;   // <data.dir>/kv
  // model.name, or the model file's name without directory and .gguf.
  std::string served_model_name() const;

  bool operator==(const ServerConfig&) const = default;
};

}  // namespace kvgate::config
