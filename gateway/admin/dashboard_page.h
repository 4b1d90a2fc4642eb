// The built-in dashboard (GET /dashboard): gateway/serving/dashboard/
// dashboard.html, embedded in the binary at build time. The page holds no
// data and no secret (it asks for a credential and polls /dashboard/data
// with it), so it is served without authentication.
#pragma once

#include <string_view>

#include "gateway/server/http_headers.h"

namespace kvgate::admin {

// The page's bytes: HTML with its one inline <style> and one inline <script>.
std::string_view dashboard_page();

// The headers to serve it with: Content-Type text/html; charset=utf-8,
// Cache-Control no-store, and a Content-Security-Policy that allows nothing
// but the page's own inline style and script (by their SHA-256) and
// fetches to its own origin.
server::HttpHeaders dashboard_headers();

}  // namespace kvgate::admin
