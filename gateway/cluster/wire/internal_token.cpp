// Invariant: an InternalToken keeps only the token's digest, so a memory
// dump of a replica's routes does not hold the secret twice.
#include "gateway/cluster/wire/internal_token.h"

#include <openssl/crypto.h>

#include <fstream>
#include <iterator>

#include "base/error.h"
#include "base/private_file.h"
#include "tenancy/api_keys.h"

namespace kvgate::wire {

std::string read_internal_token(const std::string& path) {
  require_private_file(path, "the internal token file ([cluster] internal_token_file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": the internal token file cannot be read ([cluster] internal_token_file)");
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (token.ends_with('\n')) token.pop_back();
  if (token.ends_with('\r')) token.pop_back();
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f)
      throw Error(path + ": the internal token holds a space, a control or a non-ASCII character at byte " +
                  std::to_string(i) + "; it must be printable ASCII without spaces");
  }
  if (token.size() < kMinInternalTokenChars)
    throw Error(path + ": the internal token has " + std::to_string(token.size()) + " characters; it needs at least " +
                std::to_string(kMinInternalTokenChars) + " (e.g. openssl rand -hex 32)");
  return token;
}

InternalToken::InternalToken(std::string_view token) : digest_(tenancy::key_digest(token)) {}

bool InternalToken::matches(std::string_view presented) const {
  const std::string d = tenancy::key_digest(presented);
  return d.size() == digest_.size() && CRYPTO_memcmp(d.data(), digest_.data(), d.size()) == 0;
}

}  // namespace kvgate::wire
