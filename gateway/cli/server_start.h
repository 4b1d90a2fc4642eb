// What `kvgate serve` and `kvgate route` share at start-up: the server's
// options from the config, the served model's description, and the lines
// both print (a supervisor and the end-to-end tests read them as they come).
#pragma once

#include <signal.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "engine/model_config.h"
#include "gateway/admin/admin_api.h"
#include "gateway/admin/metrics_api.h"
#include "gateway/config/server_config.h"
#include "gateway/server/server.h"
#include "gateway/server/server_options.h"
#include "gateway/serving/access_log.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/bootstrap.h"
#include "gateway/serving/http_api.h"
#include "tenancy/response_store.h"

namespace kvgate::cli {

// SIGINT and SIGTERM blocked in the calling thread and so in every thread
// it starts after, so that only wait_for_stop() sees them. Call first.
sigset_t block_stop_signals();
// Waits for one of them and says which, and how long requests in flight
// have to finish.
void wait_for_stop(const sigset_t& signals, int64_t shutdown_deadline_ms);

// "kvgate: <line>" on stdout, flushed.
void say(const std::string& line);

// `authenticates`: which Authorization headers hold a credential the
// server's routes take (ServerOptions::authenticates); none for a listener
// that asks for none.
server::ServerOptions server_options(const config::ServerConfig& c,
                                     std::function<bool(std::string_view)> authenticates = {});
serving::ApiModel api_model(const config::ServerConfig& c, const Model& model);

// The model [model] names, loaded; when it is the bundled default and not
// there (a server started outside the repository root), the error says
// where it was looked for and how to point at it.
std::shared_ptr<const Model> load_served_model(const config::ServerConfig& c);

// The server's blocking pools (serving/blocking_pool.h): billing shares its
// threads with nothing; the admin routes and the side work (scrapes, a
// tenant's store work) each have their own, bounded, so a flood of either
// sheds with 503 and delays no one's bill.
struct WorkPools {
  // Each billing thread blocks in its record's fsync; the ledger's group
  // commit puts the records of every thread waiting into the next sync, so
  // the threads bound how many records one sync carries under load.
  static constexpr int kBillingThreads = 8;
  std::optional<serving::BlockingPool> billing{std::in_place, kBillingThreads};
  std::optional<serving::BlockingPool> admin{std::in_place, 2, 64};
  std::optional<serving::BlockingPool> side{std::in_place, 2, 64};
  // Once the listeners have stopped: the admin and side jobs already queued
  // run (an admin pin still reaches the engine and the billing pool), then
  // their threads join.
  void drain_requests() {
    side.reset();
    admin.reset();
  }
};

// The operator's routes that `serve` and `route` mount beside the OpenAI
// ones: /admin, /metrics and /dashboard.
std::vector<server::Mount> routes_of(admin::AdminApi& admin, admin::MetricsApi& metrics);

// The access log [log] access_log names, opened (and said) now, so that a
// path that cannot be written stops the start at once; nullptr when none.
std::unique_ptr<serving::AccessLog> open_access_log(const config::ServerConfig& c);

// Where the tenancy store lives: <data.dir>/tenancy.
std::string tenancy_dir(const config::ServerConfig& c);
// The Responses API's store limits, from [data].
tenancy::ResponseLimits response_limits(const config::ServerConfig& c);

// The data directory, the server's alone: files are created mode 0600 and
// directories 0700 from here on (umask 077), and the directory itself is
// made 0700, said on a start-up line when it was open to others.
void prepare_data_dir(const config::ServerConfig& c);

// What the first start makes and shows once (the demo key, the admin
// token), made and shown now if this is the first start (on stdout, or in
// the new file [admin] print_secrets_to names), and the admin token's
// digest, which must exist by now.
struct StartSecrets {
  serving::FirstStartSecrets shown;
  serving::AdminToken admin;
};
StartSecrets start_secrets(tenancy::Tenancy& tenancy, const config::ServerConfig& c);
// The certificate, where it listens and a curl line to try it.
void announce_listener(const config::ServerConfig& c, const server::Server& http,
                       const serving::FirstStartSecrets& secrets, const std::string& model_id);

}  // namespace kvgate::cli
