// The file [admin] print_secrets_to names: where a first start's secrets
// (the demo tenant's API key, the admin token; bootstrap.h) are written
// instead of stdout, which under systemd is the journal, kept and readable
// by whoever reads the logs.
//
// The file is created before any secret exists (create(), then bootstrap(),
// then write()), so a file that cannot be made stops the start with nothing
// made and nothing lost. It is created with O_EXCL and mode 0600: an
// existing file, perhaps the secrets of an earlier first start, is never
// overwritten. Its text is shell (`. FILE` sets KVGATE_API_KEY and
// KVGATE_ADMIN_TOKEN, the variables the curl hint and kvgatectl read).
//
// One thread; the object owns the open file until write() or destruction.
#pragma once

#include <string>

#include "gateway/serving/bootstrap.h"

namespace kvgate::serving {

class SecretsFile {
 public:
  // Creates `path` (mode 0600). Throws kvgate::Error naming it when it
  // exists ("refusing to overwrite") or cannot be created.
  static SecretsFile create(const std::string& path);
  ~SecretsFile();
  SecretsFile(SecretsFile&& other) noexcept;
  SecretsFile& operator=(SecretsFile&&) = delete;
  SecretsFile(const SecretsFile&) = delete;
  SecretsFile& operator=(const SecretsFile&) = delete;

  // Writes the secrets made (those set in `s`), syncs and closes. Throws
  // kvgate::Error when the write fails: the caller still holds the secrets
  // and must show them some other way.
  void write(const FirstStartSecrets& s);

  const std::string& path() const { return path_; }

  // The file's text for `s`, as write() writes it.
  static std::string text(const FirstStartSecrets& s);

 private:
  SecretsFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace kvgate::serving
