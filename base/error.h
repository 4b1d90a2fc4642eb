// kvgate::Error: the exception type for bad input (files, shapes, prompts,
// flags, wire bodies), thrown by every module but tenancy/ (which has its
// own, with codes). Its message names what is wrong, for a person.
#pragma once

#include <stdexcept>
#include <string>

namespace kvgate {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace kvgate
