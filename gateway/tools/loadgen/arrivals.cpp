// Poisson arrival offsets. Pure; any thread.
#include "gateway/tools/loadgen/arrivals.h"

#include <cmath>

#include "base/error.h"
#include "gateway/tools/loadgen/token_blocks.h"

namespace kvgate::loadgen {

std::vector<double> poisson_arrivals(size_t n, double rate, uint64_t seed) {
  if (!(rate > 0)) throw Error("--request-rate must be above 0 (or inf)");
  std::vector<double> out(n, 0.0);
  if (std::isinf(rate)) return out;
  uint64_t state = mix64(seed ^ 0xA7717A15ull);
  double t = 0;
  for (size_t i = 1; i < n; ++i) {
    state += 0x9E3779B97F4A7C15ull;
    // u in (0, 1]: 53 random bits, never 0, so the log is finite.
    const double u = (static_cast<double>(mix64(state) >> 11) + 1.0) / 9007199254740992.0;
    t += -std::log(u) / rate;
    out[i] = t;
  }
  return out;
}

}  // namespace kvgate::loadgen
