// The bearer credentials a route may take, checked once here for every
// route: a tenant's API key ("kvg-...", resolved by tenancy) or the admin
// token ("kvga-..."). Errors are OpenAI-shaped ApiErrors: 401 for a missing
// or unknown credential, 403 for one that is valid but not enough.
//
// Any thread (tenancy's lookups and the token are thread-safe).
#pragma once

#include <optional>
#include <string_view>

#include "gateway/server/http_request.h"
#include "gateway/serving/admin_token.h"
#include "tenancy/tenancy.h"

namespace kvgate::serving {

// An active tenant's key; anything else (unknown, revoked, a suspended
// tenant's) is 401, without saying which.
tenancy::Principal require_tenant(const server::HttpRequest& req, tenancy::Tenancy& tenancy);

// The same, also taking the key from an `x-api-key` header, as Anthropic's
// clients send it (which wins when both are present, as Anthropic reads it).
tenancy::Principal require_tenant_or_x_api_key(const server::HttpRequest& req, tenancy::Tenancy& tenancy);

// The admin token; a tenant key gets 403 like any other wrong credential.
void require_admin(const server::HttpRequest& req, const AdminToken& token);

// The admin token (nullopt) or an active tenant's key (that tenant).
std::optional<tenancy::Principal> require_admin_or_tenant(const server::HttpRequest& req, const AdminToken& token,
                                                          tenancy::Tenancy& tenancy);

// The token of an Authorization header's value "Bearer <token>"; none for
// anything else (another scheme, an empty token).
std::optional<std::string_view> bearer_token(std::string_view authorization);

// Whether an Authorization header's value holds a credential some route
// takes: an active tenant's key or the admin token. The server asks it of
// every request's header, before reading the body
// (server::ServerOptions::authenticates); the routes still check their own.
bool is_known_credential(std::string_view authorization, tenancy::Tenancy& tenancy, const AdminToken& token);

}  // namespace kvgate::serving
