#include "gateway/serving/metrics_api.h"

#include "gateway/openai/api_error.h"
#include "gateway/serving/credentials.h"
#include "gateway/serving/json_reply.h"

namespace kvgate::serving {
namespace {

// The text format's content type (Prometheus negotiates 0.0.4 from it).
constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

void MetricsApi::send_exposition(server::Reply reply) {
  work_.post([this, reply]() mutable {
    try {
      if (refresh_) refresh_();
      reply.send(200, {{"Content-Type", kExpositionType}, {"Cache-Control", "no-store"}}, metrics_.exposition());
    } catch (const std::exception& e) {
      send_error(reply, openai::internal_error(e.what()));
    }
  });
}

void MetricsApi::metrics(const server::HttpRequest& req, server::Reply reply) {
  require_admin(req, token_);
  send_exposition(std::move(reply));
}

void MetricsApi::dashboard_data(const server::HttpRequest& req, server::Reply reply) {
  const std::optional<tenancy::Principal> who = require_admin_or_tenant(req, token_, tenancy_);
  std::optional<std::string> tenant;
  if (who) tenant = who->tenant.id;
  work_.post([this, reply, tenant]() mutable {
    try {
      if (refresh_) refresh_();
      send_json(reply, 200, metrics_.dashboard(tenant), {{"Cache-Control", "no-store"}});
    } catch (const std::exception& e) {
      send_error(reply, openai::internal_error(e.what()));
    }
  });
}

server::Handler MetricsApi::open_listener() {
  return [this](server::HttpRequest req, server::Reply reply) {
    try {
      const std::string_view path = req.path();
      if (path != "/metrics" && path != "/health") throw openai::route_not_found(req.method, path);
      if (req.method != "GET") throw openai::method_not_allowed(req.method, path);
      if (path == "/health") return send_json(reply, 200, {{"status", "ok"}});
      send_exposition(std::move(reply));
    } catch (const openai::ApiError& e) {
      send_error(reply, e);
    }
  };
}

}  // namespace kvgate::serving
