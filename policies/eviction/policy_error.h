// PolicyError: a policy name, parameter or value that is not valid (what the
// registry throws). policies/ uses nothing of ours, so it is not
// kvgate::Error; callers that speak to a person (the CLI, the admin API)
// turn it into their own error with the same message.
#pragma once

#include <stdexcept>
#include <string>

namespace kvgate::policies {

class PolicyError : public std::invalid_argument {
 public:
  explicit PolicyError(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace kvgate::policies
