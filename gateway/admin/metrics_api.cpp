#include "gateway/admin/metrics_api.h"

#include <cstdio>

#include "base/version.h"
#include "gateway/admin/dashboard_page.h"
#include "gateway/openai/api_error.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/json_reply.h"

namespace kvgate::admin {
namespace {

// The text format's content type (Prometheus negotiates 0.0.4 from it).
constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

// A refresh that failed (the engine stopped, a replica unreachable): the
// detail, which may name a file or a replica's URL, is the operator's, in
// the log; /dashboard/data answers tenants too, so the answer is generic.
void refresh_failed(server::Reply& reply, const std::exception& e) {
  std::fprintf(stderr, "kvgate: a metrics refresh failed: %s\n", e.what());
  serving::send_error(reply, openai::internal_error());
}

}  // namespace

void MetricsApi::send_exposition(server::Reply reply) {
  const bool queued = work_.try_post([this, reply]() mutable {
    try {
      if (refresh_) refresh_();
      reply.send(200, {{"Content-Type", kExpositionType}, {"Cache-Control", "no-store"}}, metrics_.exposition());
    } catch (const std::exception& e) {
      refresh_failed(reply, e);
    }
  });
  if (!queued) serving::send_shed(reply, "side");
}

void MetricsApi::metrics(const server::HttpRequest& req, server::Reply reply) {
  serving::require_admin(req, token_);
  send_exposition(std::move(reply));
}

void MetricsApi::dashboard_data(const server::HttpRequest& req, server::Reply reply) {
  const std::optional<tenancy::Principal> who = serving::require_admin_or_tenant(req, token_, tenancy_);
  std::optional<std::string> tenant;
  if (who) tenant = who->tenant.id;
  const bool queued = work_.try_post([this, reply, tenant]() mutable {
    try {
      if (refresh_) refresh_();
      serving::send_json(reply, 200, metrics_.dashboard(tenant), {{"Cache-Control", "no-store"}});
    } catch (const std::exception& e) {
      refresh_failed(reply, e);
    }
  });
  if (!queued) serving::send_shed(reply, "side");
}

std::vector<server::Mount> MetricsApi::mounts() {
  auto metrics = [this](const server::HttpRequest& req, server::Reply& reply) {
    if (req.path() != "/metrics") throw openai::route_not_found(req.method, req.path());
    if (req.method != "GET") throw openai::method_not_allowed(req.method, req.path());
    this->metrics(req, reply);
  };
  auto dashboard = [this](const server::HttpRequest& req, server::Reply& reply) {
    const std::string_view path = req.path();
    if (path != "/dashboard" && path != "/dashboard/data") throw openai::route_not_found(req.method, path);
    if (req.method != "GET") throw openai::method_not_allowed(req.method, path);
    if (path == "/dashboard") {
      reply.send(200, dashboard_headers(), std::string(dashboard_page()));
      return;
    }
    dashboard_data(req, reply);
  };
  return {{"/metrics", metrics}, {"/dashboard", dashboard}};
}

server::Handler MetricsApi::open_listener() {
  return [this](server::HttpRequest req, server::Reply reply) {
    try {
      const std::string_view path = req.path();
      if (path != "/metrics" && path != "/health") throw openai::route_not_found(req.method, path);
      if (req.method != "GET") throw openai::method_not_allowed(req.method, path);
      if (path == "/health") return serving::send_json(reply, 200, {{"status", "ok"}, {"version", build_version()}});
      send_exposition(std::move(reply));
    } catch (const openai::ApiError& e) {
      serving::send_error(reply, e);
    }
  };
}

}  // namespace kvgate::admin
