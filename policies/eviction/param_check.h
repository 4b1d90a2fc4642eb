// How the policies' factories refuse a parameter out of range: a PolicyError
// naming the policy, the parameter, the rule and the value given.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "policies/eviction/policy_error.h"

namespace kvgate::policies {

// A parameter value as a person wrote it: 0.1, 3, 1e-05.
inline std::string format_param(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

inline void check_param(bool ok, std::string_view policy, std::string_view param, std::string_view rule, double value) {
  if (!ok)
    throw PolicyError(std::string(policy) + ": " + std::string(param) + " must be " + std::string(rule) + ", got " +
                      format_param(value));
}

}  // namespace kvgate::policies
