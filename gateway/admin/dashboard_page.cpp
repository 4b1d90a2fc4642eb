// The embedded page, and its Content-Security-Policy computed from it once.
#include "gateway/admin/dashboard_page.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <string>

namespace kvgate::admin {
namespace {

const unsigned char kPage[] = {
#include "dashboard_html.inc"
};

// 'sha256-<base64>' of the text between `open` and the next `close`: what
// CSP matches an inline element against. Nothing when the page has none.
std::string inline_hash(std::string_view page, std::string_view open, std::string_view close) {
  const size_t start = page.find(open);
  if (start == std::string_view::npos) return {};
  const size_t from = start + open.size();
  const size_t end = page.find(close, from);
  if (end == std::string_view::npos) return {};
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(page.data() + from), end - from, digest);
  unsigned char b64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(b64, digest, SHA256_DIGEST_LENGTH);
  return " 'sha256-" + std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(n)) + "'";
}

}  // namespace

std::string_view dashboard_page() { return {reinterpret_cast<const char*>(kPage), sizeof kPage}; }

server::HttpHeaders dashboard_headers() {
  static const std::string csp = "default-src 'none'; script-src" + inline_hash(dashboard_page(), "<script>", "</script>") +
                                 "; style-src" + inline_hash(dashboard_page(), "<style>", "</style>") +
                                 "; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
                                 "frame-ancestors 'none'";
  return {{"Content-Type", "text/html; charset=utf-8"},
          {"Cache-Control", "no-store"},
          {"Content-Security-Policy", csp},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"}};
}

}  // namespace kvgate::admin
