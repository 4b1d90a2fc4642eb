// Sampling parameters: the one place they are checked. Pure; any thread.
#include "engine/sampling/sampling_params.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.h"

namespace kvgate {
namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void validate(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0)
    throw Error("sampling: temperature must be a finite number >= 0, got " + number(p.temperature));
  if (p.top_k < 0) throw Error("sampling: top_k must be >= 0 (0 = off), got " + std::to_string(p.top_k));
  if (!(p.top_p > 0 && p.top_p <= 1))  // also rejects NaN
    throw Error("sampling: top_p must be in (0, 1], got " + number(p.top_p));
}

}  // namespace kvgate
