// ConfigLayers: the bookkeeping behind "flag > file > default" and the
// error lines that name where a bad value came from (see config_layers.h).
#include "gateway/config/config_layers.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "base/error.h"

namespace kvgate::config {

ConfigLayers::ConfigLayers() : origin_(all_options().size()) {}

void ConfigLayers::set(const Option& o, const OptionValue& v, Origin origin) {
  const std::string why = check_value(o, v);
  if (!why.empty()) {
    add_problem(origin, o.name() + " " + why);
    return;
  }
  o.set(config_, v);
  origin_[option_index(o)] = std::move(origin);
}

void ConfigLayers::add_problem(const Origin& origin, std::string_view message) {
  std::string text = origin.where;
  if (!text.empty()) text.append(": ");
  problems_.push_back({origin, text.append(message)});
}

ServerConfig ConfigLayers::finish() const {
  std::vector<Problem> problems = problems_;
  // Rules between options are judged on what the layers produced; a layer
  // that already failed could make them report a consequence, not a cause.
  if (problems.empty())
    for (const ConfigProblem& p : check_config(config_)) {
      const Origin& o = origin_[option_index(*p.option)];
      std::string text = o.where;
      if (!text.empty()) text.append(": ");
      problems.push_back({o, text.append(p.option->name()).append(" ").append(p.message)});
    }
  if (problems.empty()) return config_;
  // toml++ hands tables over sorted by key, not in file order; sort back.
  auto order = [](const Problem& p) {
    return std::pair(p.origin.line == 0 ? UINT32_MAX : p.origin.line, p.origin.column);
  };
  std::stable_sort(problems.begin(), problems.end(),
                   [&](const Problem& a, const Problem& b) { return order(a) < order(b); });
  if (problems.size() == 1) throw Error(problems[0].text);
  std::string msg = std::to_string(problems.size()) + " problems in the configuration:";
  for (const Problem& p : problems) msg.append("\n  ").append(p.text);
  throw Error(msg);
}

}  // namespace kvgate::config
