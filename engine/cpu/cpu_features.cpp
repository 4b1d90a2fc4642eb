#include "engine/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>

namespace kvgate {

bool cpu_has_avx512() {
  static const bool has = [] {
    const char* off = std::getenv("KVGATE_NO_AVX512");
    if (off && std::strcmp(off, "0") != 0 && *off) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  return has;
}

}  // namespace kvgate
