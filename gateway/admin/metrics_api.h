// MetricsApi: the observability routes (docs/metrics.md).
//
//   GET /metrics          the Prometheus exposition; the admin token on the
//                         API listener, nothing on the metrics listener
//   GET /dashboard        the page (it holds no data: no credential needed)
//   GET /dashboard/data   the dashboard's JSON: every tenant and the server
//                         for the admin token, one tenant's own figures for
//                         its API key
//
// Both first refresh the figures read at scrape time (on a server,
// ServingMetrics::collect, which reads what the engine loop published and
// never waits for it; on a route front, the replicas' state, over the
// network), so they answer from the side BlockingPool's threads, never
// from the I/O thread that received them. The credential is checked before
// anything is queued; a full queue answers 503 (blocking_pool.h).
#pragma once

#include <functional>
#include <vector>

#include "gateway/server/handler.h"
#include "gateway/server/http_request.h"
#include "gateway/server/mount.h"
#include "gateway/server/reply.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/serving_metrics.h"
#include "tenancy/tenancy.h"

namespace kvgate::admin {

class MetricsApi {
 public:
  // `refresh` runs before every exposition (on a BlockingPool thread).
  using Refresh = std::function<void()>;
  MetricsApi(Refresh refresh, serving::ServingMetrics& metrics, tenancy::Tenancy& tenancy, serving::BlockingPool& work,
             const serving::AdminToken& token)
      : refresh_(std::move(refresh)), metrics_(metrics), tenancy_(tenancy), work_(work), token_(token) {}

  // The routes on the API listener, to mount at /metrics and /dashboard.
  std::vector<server::Mount> mounts();

  // The handler of the separate metrics listener: GET /metrics without a
  // token, GET /health, 404 for anything else.
  server::Handler open_listener();

 private:
  // Throw openai::ApiError for a wrong credential.
  void metrics(const server::HttpRequest& req, server::Reply reply);
  void dashboard_data(const server::HttpRequest& req, server::Reply reply);
  void send_exposition(server::Reply reply);

  const Refresh refresh_;
  serving::ServingMetrics& metrics_;
  tenancy::Tenancy& tenancy_;
  serving::BlockingPool& work_;
  const serving::AdminToken& token_;
};

}  // namespace kvgate::admin
