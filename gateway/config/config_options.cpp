// The option table and the value rules of config_options.h. The table is
// one constant array per config section (kServerOptions, kTlsOptions, ...),
// joined in file order by all_options(). Each row binds a TOML key and a
// flag to one ServerConfig field through bind<Section, Field>, which
// converts between the field's C++ type and OptionValue; the row's range is
// the only place a limit is written down.
#include "gateway/config/config_options.h"

#include <charconv>
#include <iterator>
#include <type_traits>

#include "base/error.h"
#include "gateway/config/byte_size.h"
#include "policies/eviction/policy_error.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::config {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr int64_t kDayMs = 24LL * 3600 * 1000;
constexpr int64_t kMaxTokens = int64_t{1} << 24;

constexpr std::string_view kTables[] = {"server", "tls", "model", "limits", "kv_tiers", "data", "admin", "metrics", "cluster", "log"};
constexpr std::string_view kBackends[] = {"auto", "cpu", "cuda"};
constexpr std::string_view kKvTypes[] = {"f32", "f16", "bf16"};
// openai::tool_call_format_named's names, and auto: as the chat template says.
constexpr std::string_view kToolCallParsers[] = {"auto", "hermes", "llama3", "mistral", "deepseek", "generic"};
constexpr std::string_view kRedisModes[] = {"below_disk", "instead_of_disk"};
constexpr std::string_view kLogLevels[] = {"error", "warn", "info", "debug"};

// One row without its accessors.
struct Row {
  std::string_view table, key, flag;
  OptionKind kind;
  std::string_view help;
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
  bool allow_empty = true;
  std::span<const std::string_view> choices = {};
  bool allow_auto = false;
};

template <auto Section, auto Field>
OptionValue get_field(const ServerConfig& c) {
  const auto& v = (c.*Section).*Field;
  using T = std::decay_t<decltype(v)>;
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<int64_t>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else {
    static_assert(std::is_same_v<T, ListenAddress>);
    return v.str();
  }
}

template <auto Section, auto Field>
void set_field(ServerConfig& c, const OptionValue& x) {
  auto& v = (c.*Section).*Field;
  using T = std::decay_t<decltype(v)>;
  if constexpr (std::is_same_v<T, bool>) {
    v = std::get<bool>(x);
  } else if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>(std::get<int64_t>(x));  // in range: check_value() ran against the row's bounds
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = std::get<std::string>(x);
  } else {
    v = parse_listen_address(std::get<std::string>(x));
  }
}

template <auto Section, auto Field>
constexpr Option bind(Row r) {
  using T = std::decay_t<decltype(std::declval<ServerConfig&>().*Section.*Field)>;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    r.max = std::min<int64_t>(r.max, std::numeric_limits<T>::max());
  return Option{r.table, r.key, r.flag, r.kind, r.help, r.min, r.max, r.allow_empty, r.choices, r.allow_auto,
                &get_field<Section, Field>, &set_field<Section, Field>};
}

using C = ServerConfig;
using K = OptionKind;

// A row only `kvgate serve` has a flag for: the engine, its KV tiers, what
// a replica publishes. The front (`kvgate route`) runs none of them.
constexpr Option serve_only(Option o) {
  o.commands = static_cast<uint8_t>(ServerCommand::kServe);
  return o;
}
// A row only the front has a flag for: its replicas and how it routes.
constexpr Option route_only(Option o) {
  o.commands = static_cast<uint8_t>(ServerCommand::kRoute);
  return o;
}

// [server]
constexpr Option kServerOptions[] = {
    bind<&C::server, &ServerSection::listen>(
        {"server", "listen", "listen", K::kAddress, "HTTPS listen address, host:port (port 0: any free port)"}),
    bind<&C::server, &ServerSection::plain_http>(
        {"server", "plain_http", "plain-http", K::kBool, "also serve plain HTTP on plain_listen (off unless enabled)"}),
    bind<&C::server, &ServerSection::plain_listen>(
        {"server", "plain_listen", "plain-listen", K::kAddress, "plain HTTP listen address, used only with plain_http"}),
    bind<&C::server, &ServerSection::io_threads>(
        {"server", "io_threads", "io-threads", K::kInt, "threads running the I/O event loop", 1, 256}),
    bind<&C::server, &ServerSection::max_connections>(
        {"server", "max_connections", "max-connections", K::kInt,
         "open connections at once; more are refused (needs ulimit -n above it)", 1, 1'000'000}),
    bind<&C::server, &ServerSection::max_connections_per_address>(
        {"server", "max_connections_per_address", "max-connections-per-address", K::kInt,
         "connections served from one IP address at once; past it, 503 (0: no such limit)", 0, 1'000'000}),
    bind<&C::server, &ServerSection::unauthenticated_body_bytes>(
        {"server", "unauthenticated_body_bytes", "unauthenticated-body-bytes", K::kBytes,
         "largest request body until a connection has shown a valid key; past it, 413", 1, 4 * kGiB}),
    bind<&C::server, &ServerSection::unauthenticated_idle_ms>(
        {"server", "unauthenticated_idle_ms", "unauthenticated-idle-ms", K::kInt,
         "how long a connection that has shown no valid key may wait for a request", 1, kDayMs}),
    bind<&C::server, &ServerSection::header_limit_bytes>(
        {"server", "header_limit_bytes", "header-limit-bytes", K::kBytes,
         "largest request header block; past it, 431", 1 * kKiB, 64 * kMiB}),
    bind<&C::server, &ServerSection::body_limit_bytes>(
        {"server", "body_limit_bytes", "body-limit-bytes", K::kBytes, "largest request body; past it, 413", 1,
         4 * kGiB}),
    bind<&C::server, &ServerSection::read_timeout_ms>(
        {"server", "read_timeout_ms", "read-timeout-ms", K::kInt,
         "time to receive a whole request once it starts; past it, 408 and close", 1, kDayMs}),
    bind<&C::server, &ServerSection::idle_timeout_ms>(
        {"server", "idle_timeout_ms", "idle-timeout-ms", K::kInt,
         "how long a keep-alive connection may wait for its next request", 1, kDayMs}),
    bind<&C::server, &ServerSection::write_timeout_ms>(
        {"server", "write_timeout_ms", "write-timeout-ms", K::kInt,
         "a write that makes no progress this long drops the client and cancels its request", 1, kDayMs}),
    bind<&C::server, &ServerSection::shutdown_deadline_ms>(
        {"server", "shutdown_deadline_ms", "shutdown-deadline-ms", K::kInt,
         "after SIGTERM, time for requests in flight to finish before they are cancelled (0: cancel at once)", 0,
         kDayMs}),
};

// [tls]
constexpr Option kTlsOptions[] = {
    bind<&C::tls, &TlsSection::cert_file>(
        {"tls", "cert_file", "tls-cert", K::kString,
         "PEM certificate chain; with key_file, or neither: a self-signed pair in <data.dir>/tls/"}),
    bind<&C::tls, &TlsSection::key_file>({"tls", "key_file", "tls-key", K::kString, "PEM private key of cert_file"}),
};

// [model]
constexpr Option kModelOptions[] = {
    bind<&C::model, &ModelSection::path>(
        {"model", "path", "model", K::kString,
         "GGUF model file (default: stories260K from $KVGATE_SHARED, else ../shared, relative to the working "
         "directory)",
         0, 0, false}),
    bind<&C::model, &ModelSection::name>(
        {"model", "name", "model-name", K::kString, "model id clients send; empty = the file name without .gguf"}),
    bind<&C::model, &ModelSection::chat_template>(
        {"model", "chat_template", "chat-template", K::kString,
         "a Jinja chat template file, for a GGUF with none or a broken one; empty = the model's "
         "tokenizer.chat_template (kvgate's plain template when it has none)"}),
    bind<&C::model, &ModelSection::tool_call_parser>(
        {"model", "tool_call_parser", "tool-call-parser", K::kChoice,
         "how replies are read for tool calls: auto (as the chat template writes them), hermes, llama3, mistral, "
         "deepseek or generic",
         0, 0, true, kToolCallParsers}),
    serve_only(bind<&C::model, &ModelSection::backend>(
        {"model", "backend", "backend", K::kChoice, "auto (CUDA when built and a device exists, else CPU), cpu or cuda",
         0, 0, true, kBackends})),
    bind<&C::model, &ModelSection::block_size>(
        {"model", "block_size", "block-size", K::kInt, "tokens per KV block; the prefix cache shares whole blocks", 1,
         1024}),
    serve_only(bind<&C::model, &ModelSection::kv_budget_bytes>(
        {"model", "kv_budget", "kv-budget", K::kBytes,
         "KV cache memory, e.g. \"1GiB\" or 1073741824; \"auto\" = what max_running full contexts need, at most "
         "10% of available memory on the CPU backend (a GPU backend caps it by gpu_memory_percent, 90% when 0)",
         1, std::numeric_limits<int64_t>::max(), true, {}, true})),
    bind<&C::model, &ModelSection::kv_type>(
        {"model", "kv_type", "kv-type", K::kChoice,
         "K/V element type: f32, f16 or bf16 (half the bytes per token, twice the tokens in the budget)", 0, 0, true,
         kKvTypes}),
    serve_only(bind<&C::model, &ModelSection::gpu_memory_percent>(
        {"model", "gpu_memory_percent", "gpu-memory-percent", K::kInt,
         "a GPU backend's share of device memory, percent (vLLM's gpu_memory_utilization x 100): the KV pool "
         "gets what the weights leave of it, capped by kv_budget; 0 = kv_budget alone (90 when kv_budget is auto)",
         0, 100})),
    serve_only(bind<&C::model, &ModelSection::cuda_graphs>(
        {"model", "cuda_graphs", "cuda-graphs", K::kBool,
         "a GPU backend replays decode steps as CUDA graphs, one per padded batch size; false launches every "
         "kernel from the host (vLLM's --enforce-eager)"})),
    serve_only(bind<&C::model, &ModelSection::max_step_tokens>(
        {"model", "max_step_tokens", "max-step-tokens", K::kInt,
         "tokens per forward pass (decodes plus prefill chunks)", 1, kMaxTokens})),
    serve_only(bind<&C::model, &ModelSection::max_running>(
        {"model", "max_running", "max-running", K::kInt,
         "sequences running at once (capped at max_step_tokens); 0 = as many as the KV budget holds", 0,
         kMaxTokens})),
    serve_only(bind<&C::model, &ModelSection::chunked_prefill>(
        {"model", "chunked_prefill", "chunked-prefill", K::kBool, "split long prompts across steps"})),
    bind<&C::model, &ModelSection::prefix_cache>(
        {"model", "prefix_cache", "prefix-cache", K::kBool, "reuse cached prompt prefixes within a tenant's scope"}),
    serve_only(bind<&C::model, &ModelSection::eviction_policy>(
        {"model", "eviction_policy", "eviction-policy", K::kString,
         "the KV cache's eviction policy, name[:key=value,...]: lru, s3fifo, cost or fair (changeable live through "
         "the admin API)", 0, 0, false})),
    serve_only(bind<&C::model, &ModelSection::max_pinned_percent>(
        {"model", "max_pinned_percent", "max-pinned-percent", K::kInt,
         "the most of the device KV pool all pins together may hold, percent; a pin past it is refused (429)", 0,
         100})),
    serve_only(bind<&C::model, &ModelSection::tenant_pinned_percent>(
        {"model", "tenant_pinned_percent", "tenant-pinned-percent", K::kInt,
         "each tenant's pin quota, percent of the device KV pool; a pin past it is refused (429)",
         0, 100})),
    serve_only(bind<&C::model, &ModelSection::max_waiting>(
        {"model", "max_waiting", "max-waiting", K::kInt,
         "requests queued for the engine; past it, 503 with retry-after", 1, kMaxTokens})),
};

// [limits]
constexpr Option kLimitsOptions[] = {
    bind<&C::limits, &LimitsSection::max_prompt_tokens>(
        {"limits", "max_prompt_tokens", "max-prompt-tokens", K::kInt,
         "longest prompt in tokens; past it, 400; 0 = the model's context", 0, kMaxTokens}),
    bind<&C::limits, &LimitsSection::max_output_tokens>(
        {"limits", "max_output_tokens", "max-output-tokens", K::kInt,
         "largest max_tokens a request may ask for; past it, 400; 0 = the model's context", 0, kMaxTokens}),
    bind<&C::limits, &LimitsSection::min_cache_breakpoint_tokens>(
        {"limits", "min_cache_breakpoint_tokens", "min-cache-breakpoint-tokens", K::kInt,
         "the shortest prefix an Anthropic cache_control breakpoint writes and pins; a shorter one is not cached "
         "or billed as a write", 1, kMaxTokens}),
};

// [kv_tiers]
constexpr Option kKvTiersOptions[] = {
    serve_only(bind<&C::kv_tiers, &KvTiersSection::host_bytes>(
        {"kv_tiers", "host_bytes", "kv-host-bytes", K::kBytes,
         "host memory for KV blocks below the device pool; 0 = no host tier; \"auto\" = 10% of available memory",
         0, std::numeric_limits<int64_t>::max(), true, {}, true})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::host_policy>(
        {"kv_tiers", "host_policy", "kv-host-policy", K::kString,
         "the host tier's eviction policy, name[:key=value,...] (changeable live)", 0, 0, false})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::disk_bytes>(
        {"kv_tiers", "disk_bytes", "kv-disk-bytes", K::kBytes,
         "disk for KV blocks, in RocksDB under <data.dir>/kv; 0 = no disk tier; \"auto\" = 10% of the disk free "
         "there (counting what the tier holds)",
         0, std::numeric_limits<int64_t>::max(), true, {}, true})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::disk_policy>(
        {"kv_tiers", "disk_policy", "kv-disk-policy", K::kString,
         "the disk tier's eviction policy, name[:key=value,...] (changeable live)", 0, 0, false})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::move_aside_corrupt>(
        {"kv_tiers", "move_aside_corrupt", "kv-move-aside-corrupt", K::kBool,
         "a disk tier that will not open is renamed aside and a fresh one made, instead of refusing to start"})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis>(
        {"kv_tiers", "redis", "kv-redis", K::kString,
         "host:port of a Redis server the replicas share for KV blocks (size it with maxmemory and "
         "maxmemory-policy allkeys-lru); empty = none"})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_mode>(
        {"kv_tiers", "redis_mode", "kv-redis-mode", K::kChoice,
         "below_disk (read after the disk tier, written with it) or instead_of_disk (no disk tier)", 0, 0, true,
         kRedisModes})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_timeout_ms>(
        {"kv_tiers", "redis_timeout_ms", "kv-redis-timeout-ms", K::kInt,
         "connecting to Redis and each command at most this long; past it, a miss (counted)", 1, 60'000})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_ttl_s>(
        {"kv_tiers", "redis_ttl_s", "kv-redis-ttl-s", K::kInt,
         "each block expires from Redis this long after its last write; 0 = only Redis's eviction", 0,
         365LL * 24 * 3600})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_key_file>(
        {"kv_tiers", "redis_key_file", "kv-redis-key-file", K::kString,
         "the cluster key file (mode 0600): \"names <64 hex>\" and \"key <id> <64 hex>\" lines; every record in "
         "Redis is sealed with AES-256-GCM under it and named by keyed tags (required with kv_tiers.redis)"})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_user>(
        {"kv_tiers", "redis_user", "kv-redis-user", K::kString,
         "the Redis ACL user AUTH names (empty: the default user)"})),
    serve_only(bind<&C::kv_tiers, &KvTiersSection::redis_password_file>(
        {"kv_tiers", "redis_password_file", "kv-redis-password-file", K::kString,
         "a file (mode 0600) holding the password each Redis connection sends with AUTH; empty = no AUTH"})),
};

// [data]
constexpr Option kDataOptions[] = {
    bind<&C::data, &DataSection::dir>(
        {"data", "dir", "data-dir", K::kString,
         "the server's state: tenants, ledger, admin token, self-signed certificate", 0, 0, false}),
    bind<&C::data, &DataSection::response_retention_days>(
        {"data", "response_retention_days", "response-retention-days", K::kInt,
         "days a stored response (POST /v1/responses with store) is kept; older ones are not found", 1, 3650}),
    bind<&C::data, &DataSection::responses_per_tenant>(
        {"data", "responses_per_tenant", "responses-per-tenant", K::kInt,
         "stored responses each tenant keeps; storing one more drops its oldest", 1, 100000000}),
};

// [admin]
constexpr Option kAdminOptions[] = {
    bind<&C::admin, &AdminSection::token_file>(
        {"admin", "token_file", "admin-token-file", K::kString,
         "where the admin token generated at first start is kept; empty = <data.dir>/admin-token"}),
    bind<&C::admin, &AdminSection::print_secrets_to>(
        {"admin", "print_secrets_to", "print-secrets-to", K::kString,
         "at a start that makes secrets (the demo API key, the admin token), write them to this new file (mode "
         "0600; an existing file stops the start) instead of stdout; empty = stdout"}),
};

// [metrics]
constexpr Option kMetricsOptions[] = {
    serve_only(bind<&C::metrics, &MetricsSection::listen>(
        {"metrics", "listen", "metrics-listen", K::kString,
         "serve GET /metrics without a token on this plain-HTTP host:port; empty = on the API listener, "
         "behind the admin token"})),
};

// [cluster]
constexpr Option kClusterOptions[] = {
    serve_only(bind<&C::cluster, &ClusterSection::block_events>(
        {"cluster", "block_events", "block-events", K::kString,
         "publish the KV tiers' block events for kvgate route on this ZeroMQ endpoint to bind (tcp://host:port, "
         "ipc://path); empty = none"})),
    bind<&C::cluster, &ClusterSection::internal_token_file>(
        {"cluster", "internal_token_file", "internal-token-file", K::kString,
         "be a replica of a kvgate route front: serve /internal/ to the front presenting the token in this file "
         "(32+ printable characters) and refuse tenants' /v1 generation routes; empty = not a replica"}),
    route_only(bind<&C::cluster, &ClusterSection::replicas>(
        {"cluster", "replicas", "replicas", K::kString,
         "kvgate route: the replicas' https:// URLs, comma-separated (--replica adds one)"})),
    route_only(bind<&C::cluster, &ClusterSection::replica_ca>(
        {"cluster", "replica_ca", "replica-ca", K::kString,
         "kvgate route: a PEM bundle the replicas' TLS certificates chain to; empty = the system's trust store"})),
    route_only(bind<&C::cluster, &ClusterSection::router>(
        {"cluster", "router", "router", K::kString,
         "kvgate route: the route policy, cache_aware, round_robin or random (with :key=value parameters)", 0, 0,
         false})),
    route_only(bind<&C::cluster, &ClusterSection::health_interval_ms>(
        {"cluster", "health_interval_ms", "health-interval-ms", K::kInt,
         "kvgate route: how often each replica is asked whether it is up", 50, kDayMs})),
};

// [log]
constexpr Option kLogOptions[] = {
    bind<&C::log, &LogSection::level>(
        {"log", "level", "log-level", K::kChoice, "error, warn, info or debug", 0, 0, true, kLogLevels}),
    bind<&C::log, &LogSection::access_log>(
        {"log", "access_log", "access-log", K::kString,
         "append one line per generation request (time, tenant, status, tokens, latency; never the prompt) to "
         "this file; empty = none"}),
};
// Every section's options, in the order of kTables: all_options() in file order.
constexpr std::span<const Option> kSections[] = {kServerOptions, kTlsOptions,   kModelOptions,   kLimitsOptions,
                                                  kKvTiersOptions, kDataOptions, kAdminOptions,   kMetricsOptions,
                                                  kClusterOptions, kLogOptions};

constexpr bool each_row_in_its_section() {
  if (std::size(kSections) != std::size(kTables)) return false;
  for (size_t i = 0; i < std::size(kSections); ++i)
    for (const Option& o : kSections[i])
      if (o.table != kTables[i]) return false;
  return true;
}
static_assert(each_row_in_its_section(), "an option's table is the section it is listed in, in kTables' order");

[[noreturn]] void bad_text(std::string_view text, std::string_view what) {
  std::string msg = "'";
  msg.append(text).append("' is not ").append(what);
  throw Error(msg);
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out.append("\\u00").push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(ch);
    }
  }
  return out.append("\"");
}

}  // namespace

std::string Option::name() const { return std::string(table).append(".").append(key); }

std::span<const Option> all_options() {
  static const std::vector<Option> table = [] {
    std::vector<Option> all;
    for (std::span<const Option> section : kSections) all.insert(all.end(), section.begin(), section.end());
    return all;
  }();
  return table;
}

std::span<const std::string_view> option_tables() { return kTables; }

size_t option_index(const Option& o) { return static_cast<size_t>(&o - all_options().data()); }

const Option* find_option(std::string_view table, std::string_view key) {
  for (const Option& o : all_options())
    if (o.table == table && o.key == key) return &o;
  return nullptr;
}

std::string check_value(const Option& o, const OptionValue& v) {
  switch (o.kind) {
    case K::kBool:
      return {};
    case K::kInt:
    case K::kBytes: {
      const int64_t n = std::get<int64_t>(v);
      if (o.kind == K::kBytes && o.allow_auto && n == kAutoBytes) return {};
      auto show = [&](int64_t x) { return o.kind == K::kBytes ? format_byte_size(x) : std::to_string(x); };
      if (n < o.min) return "must be at least " + show(o.min) + " (got " + show(n) + ")";
      if (n > o.max) return "must be at most " + show(o.max) + " (got " + show(n) + ")";
      return {};
    }
    case K::kString: {
      const std::string& s = std::get<std::string>(v);
      if (s.empty() && !o.allow_empty) return "must not be empty";
      for (char ch : s)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return "must not contain control characters";
      return {};
    }
    case K::kChoice: {
      const std::string& s = std::get<std::string>(v);
      std::string list;
      for (std::string_view c : o.choices) {
        if (s == c) return {};
        list.append(list.empty() ? "" : ", ").append(c);
      }
      return "must be one of " + list + " (got " + toml_string(s) + ")";
    }
    case K::kAddress:
      try {
        (void)parse_listen_address(std::get<std::string>(v));
        return {};
      } catch (const Error& e) {
        return std::string("must be host:port: ") + e.what();
      }
  }
  return {};
}

OptionValue value_from_text(const Option& o, std::string_view text) {
  switch (o.kind) {
    case K::kBool:
      if (text == "true") return true;
      if (text == "false") return false;
      bad_text(text, "true or false");
    case K::kInt: {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec == std::errc::result_out_of_range) bad_text(text, "an integer in range");
      if (ec != std::errc() || end != text.data() + text.size()) bad_text(text, "an integer");
      return n;
    }
    case K::kBytes:
      if (o.allow_auto && text == "auto") return kAutoBytes;
      return parse_byte_size(text);
    case K::kString:
    case K::kChoice:
    case K::kAddress:
      return std::string(text);
  }
  return std::string(text);
}

std::string format_value(const Option& o, const OptionValue& v) {
  switch (o.kind) {
    case K::kBool:
      return std::get<bool>(v) ? "true" : "false";
    case K::kInt:
      return std::to_string(std::get<int64_t>(v));
    case K::kBytes: {
      if (std::get<int64_t>(v) == kAutoBytes) return "\"auto\"";
      const std::string s = format_byte_size(std::get<int64_t>(v));
      return s.find_first_not_of("0123456789") == std::string::npos ? s : toml_string(s);
    }
    case K::kString:
    case K::kChoice:
    case K::kAddress:
      return toml_string(std::get<std::string>(v));
  }
  return {};
}

std::string_view kind_description(OptionKind kind) {
  switch (kind) {
    case K::kBool:
      return "a boolean (true or false)";
    case K::kInt:
      return "an integer";
    case K::kBytes:
      return "a byte count (an integer, or a string such as \"4GiB\")";
    case K::kString:
      return "a string";
    case K::kChoice:
      return "a string";
    case K::kAddress:
      return "a string \"host:port\"";
  }
  return "a value";
}

std::vector<ConfigProblem> check_config(const ServerConfig& c) {
  std::vector<ConfigProblem> out;
  if (c.tls.cert_file.empty() != c.tls.key_file.empty()) {
    const bool has_cert = !c.tls.cert_file.empty();
    out.push_back({find_option("tls", has_cert ? "cert_file" : "key_file"),
                   std::string(has_cert ? "is set but tls.key_file is not" : "is set but tls.cert_file is not") +
                       ": give both, or neither for a self-signed certificate in the data directory"});
  }
  if (c.server.plain_http && c.server.plain_listen.port != 0 && c.server.plain_listen == c.server.listen)
    out.push_back({find_option("server", "plain_listen"),
                   "is the same address as server.listen (" + c.server.listen.str() +
                       "): plain HTTP needs a port of its own"});
  const auto check_policy = [&](std::string_view table, std::string_view key, const std::string& text) {
    try {
      const policies::PolicySpec spec = policies::parse_policy_spec(text);
      if (!policies::find_eviction_policy(spec.name)->online)
        out.push_back({find_option(table, key), "is '" + spec.name + "', the simulator's offline bound"});
    } catch (const policies::PolicyError& e) {
      out.push_back({find_option(table, key), e.what()});
    }
  };
  check_policy("model", "eviction_policy", c.model.eviction_policy);
  check_policy("kv_tiers", "host_policy", c.kv_tiers.host_policy);
  check_policy("kv_tiers", "disk_policy", c.kv_tiers.disk_policy);
  if (!c.kv_tiers.redis.empty() && c.kv_tiers.redis_key_file.empty())
    out.push_back({find_option("kv_tiers", "redis"),
                   "needs kv_tiers.redis_key_file: Redis holds every tenant's blocks, sealed under that key"});
  if (!c.kv_tiers.redis.empty()) {
    try {
      if (parse_listen_address(c.kv_tiers.redis).port == 0)
        out.push_back({find_option("kv_tiers", "redis"), "needs a port: \"" + c.kv_tiers.redis + "\" has port 0"});
    } catch (const Error& e) {
      out.push_back({find_option("kv_tiers", "redis"), std::string("must be host:port: ") + e.what()});
    }
  }
  if (const std::string& e = block_events_endpoint(c.cluster.block_events);
      !e.empty() && e.rfind("tcp://", 0) != 0 && e.rfind("ipc://", 0) != 0)
    out.push_back({find_option("cluster", "block_events"),
                   "must be a port (loopback) or a ZeroMQ endpoint to bind, tcp://host:port or ipc://path: \"" + e + "\""});
  else if (!e.empty() && c.cluster.internal_token_file.empty())
    out.push_back({find_option("cluster", "block_events"),
                   "needs cluster.internal_token_file: the events are for a route front, encrypted and open only to "
                   "a holder of that token"});
  if (!c.metrics.listen.empty()) {
    try {
      const ListenAddress m = parse_listen_address(c.metrics.listen);
      if (m.port != 0 && (m == c.server.listen || (c.server.plain_http && m == c.server.plain_listen)))
        out.push_back({find_option("metrics", "listen"),
                       "is the address of another listener (" + m.str() + "): metrics need a port of their own"});
    } catch (const Error& e) {
      out.push_back({find_option("metrics", "listen"), std::string("must be host:port: ") + e.what()});
    }
  }
  return out;
}

}  // namespace kvgate::config
