// Invariant: the plaintext token exists only in create()'s return value; the
// file holds its digest, hex-encoded.
#include "gateway/serving/admin_token.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "gateway/serving/hex_text.h"
#include "tenancy/api_keys.h"
#include "tenancy/random_bytes.h"

namespace kvgate::serving {
namespace {

constexpr std::string_view kPrefix = "kvga-";

}  // namespace

std::optional<AdminToken> AdminToken::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  const std::optional<std::string> digest = from_hex(line);
  if (!digest || digest->size() != 32)
    throw Error(path + ": not an admin token digest (expected 64 hex digits); delete it to make a new token");
  return AdminToken(*digest);
}

std::pair<AdminToken, std::string> AdminToken::create(const std::string& path) {
  std::string token(kPrefix);
  token += to_hex(tenancy::random_bytes(32));
  const std::string digest = tenancy::key_digest(token);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw Error(path + ": cannot create the admin token file: " + std::strerror(errno));
  const std::string text = to_hex(digest) + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw Error(path + ": cannot write the admin token file");
  }
  return {AdminToken(digest), token};
}

bool AdminToken::matches(std::string_view presented) const {
  if (!presented.starts_with(kPrefix)) return false;
  const std::string d = tenancy::key_digest(presented);
  return CRYPTO_memcmp(d.data(), digest_.data(), d.size()) == 0;
}

}  // namespace kvgate::serving
