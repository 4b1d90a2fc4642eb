// Locates ../shared (models, vocabularies, traces) for tests and benchmarks.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kvgate::testing {

inline std::string shared_path(const std::string& rel) {
  const char* env = std::getenv("KVGATE_SHARED");
  std::string root = env && *env ? env : KVGATE_SHARED_DIR;
  return root + "/" + rel;
}

// The whole file, bytes as they are; throws if it cannot be opened, so a
// missing data file fails the test that needs it by name.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace kvgate::testing
