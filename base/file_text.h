// A small file's whole text (a template, a prompt, a token), read for a
// command-line or config option; a file that cannot be read is a
// kvgate::Error naming it. Any thread.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"

namespace kvgate {

inline std::string read_file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open");
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw Error(path + ": cannot read");
  return s.str();
}

}  // namespace kvgate
