// The internal token: the secret a route front and its replicas share
// ([cluster] internal_token_file on each, the same file's contents). The
// replica serves its /internal/ routes to whoever presents it, and only to
// them; the front presents it on every call. The operator makes it (for
// example `openssl rand -hex 32 > token`) and hands it to both machines.
//
// Immutable once made: any thread may check a token.
#pragma once

#include <string>
#include <string_view>

namespace kvgate::wire {

// At least this many characters: a guessable token would let a tenant past
// the front's quotas and billing.
inline constexpr size_t kMinInternalTokenChars = 32;

// The file's token, one trailing newline (LF or CRLF) trimmed. Throws
// kvgate::Error naming the file and what is wrong: missing or unreadable,
// shorter than kMinInternalTokenChars, or holding a character that is not
// printable ASCII or is a space.
std::string read_internal_token(const std::string& path);

class InternalToken {
 public:
  explicit InternalToken(std::string_view token);
  // Constant-time comparison of digests (the presented token's length
  // tells an attacker nothing either).
  bool matches(std::string_view presented) const;

 private:
  std::string digest_;  // SHA-256 of the token
};

}  // namespace kvgate::wire
