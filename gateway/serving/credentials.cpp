#include "gateway/serving/credentials.h"

#include "gateway/openai/api_error.h"

namespace kvgate::serving {
namespace {

constexpr std::string_view kBearer = "Bearer ";

std::optional<std::string_view> bearer(const server::HttpRequest& req) {
  const std::optional<std::string_view> auth = req.header("authorization");
  return auth ? bearer_token(*auth) : std::nullopt;
}

// tenancy answers nothing for an unknown, revoked or suspended tenant's key
// alike, so all of them are the same 401.
tenancy::Principal known(std::optional<tenancy::Principal> who) {
  if (!who) throw openai::invalid_api_key();
  return std::move(*who);
}

}  // namespace

tenancy::Principal require_tenant(const server::HttpRequest& req, tenancy::Tenancy& tenancy) {
  const std::optional<std::string_view> key = bearer(req);
  if (!key) throw openai::invalid_api_key();
  return known(tenancy.authenticate(*key));
}

tenancy::Principal require_tenant_or_x_api_key(const server::HttpRequest& req, tenancy::Tenancy& tenancy) {
  const std::optional<std::string_view> key = req.header("x-api-key");
  if (!key) return require_tenant(req, tenancy);
  return known(tenancy.authenticate(*key));
}

void require_admin(const server::HttpRequest& req, const AdminToken& token) {
  const std::optional<std::string_view> presented = bearer(req);
  if (!presented)
    throw openai::ApiError(401, "The admin routes need the admin token as 'Authorization: Bearer kvga-...'.",
                           "authentication_error", std::nullopt, "missing_admin_token");
  if (!token.matches(*presented)) throw openai::permission_denied("This credential does not open the admin routes.");
}

std::optional<tenancy::Principal> require_admin_or_tenant(const server::HttpRequest& req, const AdminToken& token,
                                                          tenancy::Tenancy& tenancy) {
  const std::optional<std::string_view> presented = bearer(req);
  if (!presented) throw openai::invalid_api_key();
  if (token.matches(*presented)) return std::nullopt;
  return known(tenancy.authenticate(*presented));
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  if (authorization.size() <= kBearer.size() || !authorization.starts_with(kBearer)) return std::nullopt;
  return authorization.substr(kBearer.size());
}

bool is_known_credential(std::string_view authorization, tenancy::Tenancy& tenancy, const AdminToken& token) {
  const std::optional<std::string_view> presented = bearer_token(authorization);
  return presented && (token.matches(*presented) || tenancy.authenticate(*presented).has_value());
}

}  // namespace kvgate::serving
