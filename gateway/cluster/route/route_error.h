// RouteError: a router name, parameter or replica id that is not valid.
// route/ uses only cache/ and policies/ ids, so it is not kvgate::Error;
// callers that speak to a person (the CLI, the front) turn it into their
// own error with the same message.
#pragma once

#include <stdexcept>
#include <string>

namespace kvgate::route {

class RouteError : public std::invalid_argument {
 public:
  explicit RouteError(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace kvgate::route
