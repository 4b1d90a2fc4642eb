// Mount: a Handler that answers a path and every path below it. A server's
// routes come from several parts (the OpenAI routes in serving/, the
// operator's in admin/, a replica's internal ones in cluster/replica/);
// each part mounts its own prefixes and none includes another's headers.
// "/admin" holds "/admin" and "/admin/tenants", never "/administrator".
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <functional>

#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"

namespace kvgate::server {

// Called on the I/O thread that read the request, as a Handler is; it may
// throw openai::ApiError, which the mounting API answers in its own shape.
using MountedRoutes = std::function<void(const HttpRequest& request, Reply& reply)>;

struct Mount {
  std::string prefix;  // "/admin": no trailing slash
  MountedRoutes routes;
};

inline bool mount_holds(std::string_view prefix, std::string_view path) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// The first mount that holds `path`, or nullptr.
inline const MountedRoutes* find_mount(std::span<const Mount> mounts, std::string_view path) {
  for (const Mount& m : mounts)
    if (mount_holds(m.prefix, path)) return &m.routes;
  return nullptr;
}

}  // namespace kvgate::server
