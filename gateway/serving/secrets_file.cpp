#include "gateway/serving/secrets_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/error.h"

namespace kvgate::serving {

SecretsFile SecretsFile::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) return SecretsFile(path, fd);
  const int err = errno;
  if (err == EEXIST)
    throw Error(path + " exists: refusing to overwrite it (it may hold the secrets of an earlier first start); " +
                "move it away or give --print-secrets-to another path");
  throw Error(path + ": cannot create the secrets file: " + std::strerror(err));
}

SecretsFile::SecretsFile(SecretsFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

SecretsFile::~SecretsFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string SecretsFile::text(const FirstStartSecrets& s) {
  std::string out =
      "# kvgate: secrets made at start-up, shown nowhere else (the server keeps only their digests).\n"
      "# Sourced in a shell (. this-file), it sets them.\n";
  if (s.demo_key)
    out += "# the API key of tenant '" + std::string(kDemoTenant) + "'\nexport KVGATE_API_KEY=" + *s.demo_key + "\n";
  if (s.admin_token) out += "# the admin token (kvgatectl reads KVGATE_ADMIN_TOKEN)\nexport KVGATE_ADMIN_TOKEN=" + *s.admin_token + "\n";
  return out;
}

void SecretsFile::write(const FirstStartSecrets& s) {
  const std::string t = text(s);
  size_t done = 0;
  while (done < t.size()) {
    const ssize_t n = ::write(fd_, t.data() + done, t.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == t.size() && ::fsync(fd_) == 0;
  const int err = errno;
  ::close(fd_);
  fd_ = -1;
  if (!ok) {
    ::unlink(path_.c_str());  // no half-written file to mistake for the secrets
    throw Error(path_ + ": cannot write the secrets file: " + std::strerror(err));
  }
}

}  // namespace kvgate::serving
