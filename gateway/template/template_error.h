// The one exception a template throws, compiling or rendering. what() is
// the message Jinja2 would give for the same failure, so a refusal names
// the template's own words: raise_exception("System role not supported")
// is "System role not supported", a missing variable "'x' is undefined".
#pragma once

#include <string>

#include "base/error.h"

namespace kvgate::jinja {

class TemplateError : public Error {
 public:
  enum class Kind {
    kSyntax,   // the template does not parse (reported with its line)
    kRaised,   // the template called raise_exception(message)
    kRuntime,  // a Python-level error: undefined use, a type error, the sandbox
    kLimit,    // a step, output or nesting limit was hit
  };
  TemplateError(Kind kind, const std::string& message) : Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

[[noreturn]] inline void fail(const std::string& message) {
  throw TemplateError(TemplateError::Kind::kRuntime, message);
}

}  // namespace kvgate::jinja
