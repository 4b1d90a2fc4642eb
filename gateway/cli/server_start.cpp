#include "gateway/cli/server_start.h"

#include <pthread.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "base/error.h"
#include "base/private_file.h"
#include "base/version.h"
#include "engine/model/weight_summary.h"
#include "gateway/serving/secrets_file.h"

namespace kvgate::cli {

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void wait_for_stop(const sigset_t& signals, int64_t shutdown_deadline_ms) {
  int sig = 0;
  sigwait(&signals, &sig);
  say(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): finishing requests in flight for up to " +
      std::to_string(shutdown_deadline_ms) + " ms");
}

void say(const std::string& line) {
  std::printf("kvgate: %s\n", line.c_str());
  std::fflush(stdout);  // a supervisor or test reads these lines as they come
}

server::ServerOptions server_options(const config::ServerConfig& c,
                                     std::function<bool(std::string_view)> authenticates) {
  server::ServerOptions o;
  o.authenticates = std::move(authenticates);
  o.address = c.server.listen.host;
  o.https_port = c.server.listen.port;
  if (c.server.plain_http) o.http_port = c.server.plain_listen.port;
  if (!c.self_signed()) {
    o.tls.cert_file = c.tls.cert_file;
    o.tls.key_file = c.tls.key_file;
  }
  o.tls.self_signed_dir = std::filesystem::path(c.data.dir) / "tls";
  o.io_threads = c.server.io_threads;
  o.max_connections = static_cast<size_t>(c.server.max_connections);
  o.max_header_bytes = static_cast<size_t>(c.server.header_limit_bytes);
  o.max_body_bytes = static_cast<size_t>(c.server.body_limit_bytes);
  o.read_timeout = std::chrono::milliseconds(c.server.read_timeout_ms);
  o.idle_timeout = std::chrono::milliseconds(c.server.idle_timeout_ms);
  o.write_timeout = std::chrono::milliseconds(c.server.write_timeout_ms);
  o.max_connections_per_address = static_cast<size_t>(c.server.max_connections_per_address);
  o.max_unauthenticated_body_bytes = static_cast<size_t>(c.server.unauthenticated_body_bytes);
  o.unauthenticated_idle_timeout = std::chrono::milliseconds(c.server.unauthenticated_idle_ms);
  return o;
}

std::vector<server::Mount> routes_of(admin::AdminApi& admin, admin::MetricsApi& metrics) {
  std::vector<server::Mount> mounts = metrics.mounts();
  mounts.push_back({"/admin", [&admin](const server::HttpRequest& r, server::Reply& rep) { admin(r, rep); }});
  return mounts;
}

serving::ApiModel api_model(const config::ServerConfig& c, const Model& model) {
  const ModelConfig& mc = model.config();
  const WeightSummary weights = summarize_weights(model.file());
  serving::ApiModel m;
  m.weight_type = weights.file_type;
  m.weight_bytes = weights.bytes;
  m.parameters = model.weights().parameter_count();
  m.id = c.served_model_name();
  m.created_unix =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  m.context_tokens = mc.context_length;
  m.max_prompt_tokens = c.limits.max_prompt_tokens;
  m.max_output_tokens = c.limits.max_output_tokens;
  m.min_cache_breakpoint_tokens = c.limits.min_cache_breakpoint_tokens;
  return m;
}

std::shared_ptr<const Model> load_served_model(const config::ServerConfig& c) {
  if (c.model.path == config::ModelSection::bundled_model_path() && !std::filesystem::exists(c.model.path))
    throw Error("the bundled model " + c.model.path + " is not there (it is looked for in $KVGATE_SHARED, else in " +
                "../shared from the working directory): run from the repository root, set KVGATE_SHARED to the " +
                "shared data folder, or give --model FILE");
  return Model::load(c.model.path);
}

std::unique_ptr<serving::AccessLog> open_access_log(const config::ServerConfig& c) {
  if (c.log.access_log.empty()) return nullptr;
  std::unique_ptr<serving::AccessLog> log = serving::AccessLog::open(c.log.access_log);
  say("access log " + log->path() + " (a line per request, no prompt)");
  return log;
}

std::string tenancy_dir(const config::ServerConfig& c) {
  return (std::filesystem::path(c.data.dir) / "tenancy").string();
}

tenancy::ResponseLimits response_limits(const config::ServerConfig& c) {
  return {std::chrono::hours(24) * c.data.response_retention_days,
          static_cast<uint64_t>(c.data.responses_per_tenant)};
}

namespace {

void print_secrets(const serving::FirstStartSecrets& shown) {
  if (shown.demo_key)
    say(std::string("first start: tenant '") + serving::kDemoTenant + "', API key (shown once): " + *shown.demo_key);
  if (shown.admin_token) say("first start: admin token (shown once): " + *shown.admin_token);
}

}  // namespace

StartSecrets start_secrets(tenancy::Tenancy& tenancy, const config::ServerConfig& c) {
  // The secrets file is made before any secret exists: one that cannot be
  // made (it exists, say) stops the start with nothing made and nothing lost.
  std::optional<serving::SecretsFile> file;
  if (!c.admin.print_secrets_to.empty() && serving::secrets_pending(tenancy, c.admin_token_path()))
    file.emplace(serving::SecretsFile::create(c.admin.print_secrets_to));
  serving::FirstStartSecrets shown = serving::bootstrap(tenancy, c.admin_token_path());
  if (file) {
    try {
      file->write(shown);
      say(std::string(shown.demo_key ? "first start: the demo tenant's API key and the admin token"
                                     : "no admin token file: a new admin token") +
          ", made now, written to " + file->path() + " (mode 0600), shown nowhere else");
      shown.demo_key.reset();  // nor in the curl hint
    } catch (const Error& e) {
      say(std::string(e.what()) + ": shown here instead");
      print_secrets(shown);
    }
  } else {
    print_secrets(shown);
  }
  std::optional<serving::AdminToken> admin = serving::AdminToken::load(c.admin_token_path());
  if (!admin) throw Error(c.admin_token_path() + ": the admin token file disappeared at start-up");
  return {std::move(shown), std::move(*admin)};
}

void announce_listener(const config::ServerConfig& c, const server::Server& http,
                       const serving::FirstStartSecrets& secrets, const std::string& model_id) {
  if (const auto& cert = http.certificate())
    say("TLS certificate " + cert->cert_file.string() + " (SHA-256 " + cert->sha256_fingerprint +
        (cert->generated ? ", self-signed, made now)" : ")"));
  const std::string base = "https://" + c.server.listen.host + ":" + std::to_string(*http.https_port());
  say("kvgate " + std::string(build_version()) + " listening on " + base +
      (http.http_port() ? " and http://" + c.server.plain_listen.host + ":" + std::to_string(*http.http_port()) : ""));
  // The demo key is only known at first start; later the operator has it.
  const std::string key = secrets.demo_key ? *secrets.demo_key : "$KVGATE_API_KEY";
  const std::string ca =
      http.certificate() && c.self_signed() ? "--cacert " + http.certificate()->cert_file.string() + " " : "";
  say(std::string(secrets.demo_key ? "try"
                                    : "try, with KVGATE_API_KEY set to an API key (the demo tenant's was shown at first "
                                      "start, or written to the --print-secrets-to file)") +
      ": curl " + ca + base + "/v1/completions -H \"Authorization: Bearer " + key +
      "\" -H 'Content-Type: application/json' -d '{\"model\":\"" + model_id +
      "\",\"prompt\":\"Once upon a time\",\"max_tokens\":32}'");
}

void prepare_data_dir(const config::ServerConfig& c) {
  ::umask(077);  // the ledger, the tiers' blocks (prompts), the TLS key: none for other users
  if (const std::string changed = make_private_directory(c.data.dir); !changed.empty()) say("data directory " + changed);
}

}  // namespace kvgate::cli
