// kvgate::Error: the one exception type the engine throws for bad input
// (files, shapes, prompts). Its message names what is wrong, for a person.
#pragma once

#include <stdexcept>
#include <string>

namespace kvgate {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace kvgate
