// Locates ../shared (models, vocabularies, traces) for tests and benchmarks.
#pragma once

#include <cstdlib>
#include <string>

namespace kvgate::testing {

inline std::string shared_path(const std::string& rel) {
  const char* env = std::getenv("KVGATE_SHARED");
  std::string root = env && *env ? env : KVGATE_SHARED_DIR;
  return root + "/" + rel;
}

}  // namespace kvgate::testing
