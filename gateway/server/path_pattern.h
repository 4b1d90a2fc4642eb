// Path patterns for a table of HTTP routes: "/admin/tenants/{id}/keys"
// matches "/admin/tenants/acme/keys" with {id} = "acme". Segments are split
// on '/', empty ones ignored (as "//" is read by most servers); a {name}
// segment matches any one non-empty segment, anything else itself.
#pragma once

#include <string_view>
#include <vector>

namespace kvgate::server {

// The path's non-empty '/'-separated segments, views into `path`.
std::vector<std::string_view> path_segments(std::string_view path);

// Whether `path` fits `pattern`; if so, `params` holds the {} segments'
// values in order (views into `path`).
bool match_path(std::string_view pattern, std::string_view path, std::vector<std::string_view>& params);

}  // namespace kvgate::server
