// Binding a call's arguments to a builtin's parameters the way Python
// does: positionally, then by name; too many or an unknown name is the
// TypeError Python would raise.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/template/template_error.h"
#include "gateway/template/value.h"

namespace kvgate::jinja {

class BoundArgs {
 public:
  BoundArgs(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params)
      : params_(params), values_(params.size(), nullptr) {
    if (args.positional.size() > params_.size())
      fail(std::string(function) + "() takes at most " + std::to_string(params_.size()) + " arguments (" +
           std::to_string(args.positional.size()) + " given)");
    for (std::size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
    for (const auto& [name, value] : args.keyword) {
      std::size_t i = 0;
      while (i < params_.size() && params_[i] != name) ++i;
      if (i == params_.size()) fail(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
      values_[i] = &value;
    }
  }
  // The argument for parameter i, or null when not given.
  const Value* get(std::size_t i) const { return values_[i]; }
  bool has(std::size_t i) const { return values_[i] != nullptr; }
  Value value_or(std::size_t i, Value fallback) const { return values_[i] ? *values_[i] : fallback; }

 private:
  std::vector<std::string_view> params_;
  std::vector<const Value*> values_;
};

}  // namespace kvgate::jinja
