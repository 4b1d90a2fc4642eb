// The admin token: the one credential of the /admin/ routes. Generated at
// first start ("kvga-" + 64 hex digits of 32 random bytes), shown once, and
// kept at rest only as its SHA-256 digest in a file of mode 0600 under the
// data directory. Tenant API keys ("kvg-...") live in tenancy's store and are
// never compared against it, so no tenant key can stand in for it.
//
// Immutable once loaded: any thread may check a token.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvgate::serving {

class AdminToken {
 public:
  // Reads the digest file; nothing when it does not exist. Throws
  // kvgate::Error for a file that is not a digest.
  static std::optional<AdminToken> load(const std::string& path);
  // Creates a new token, writes its digest to `path` (which must not exist)
  // and returns the token with its plaintext, to be shown once.
  static std::pair<AdminToken, std::string> create(const std::string& path);

  // Constant-time comparison of digests.
  bool matches(std::string_view presented) const;

 private:
  explicit AdminToken(std::string digest) : digest_(std::move(digest)) {}
  std::string digest_;  // 32 bytes
};

}  // namespace kvgate::serving
