// Path patterns for a table of HTTP routes: "/admin/tenants/{id}/keys"
// matches "/admin/tenants/acme/keys" with {id} = "acme". Segments are split
// on '/', empty ones ignored (as "//" is read by most servers); a {name}
// segment matches any one non-empty segment, anything else itself.
//
// A route table splits each pattern once, when it is built, and a request's
// path once, before it is matched against every pattern.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace kvgate::server {

// The path's non-empty '/'-separated segments, views into `path`.
std::vector<std::string_view> path_segments(std::string_view path);

class PathPattern {
 public:
  // Keeps views into `pattern`: a literal, as route tables write them (not
  // explicit, so that a table's row reads as its literal).
  PathPattern(const char* pattern);

  // Whether a path, split by path_segments(), fits; if so, `params` holds
  // the {} segments' values in order (views into the path).
  bool match(std::span<const std::string_view> path, std::vector<std::string_view>& params) const;

 private:
  std::vector<std::string_view> segments_;
};

}  // namespace kvgate::server
