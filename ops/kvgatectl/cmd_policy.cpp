// policy show | set TIER POLICY [--param KEY=VALUE]...
// The eviction policy of each cache tier, and the policies the server has
// with their parameters and defaults.
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

// {"a": 1, "b": 0.5} -> "a=1 b=0.5"; {} -> "-".
std::string params_text(const json::object& p) {
  std::string s;
  for (const auto& m : p) {
    if (!s.empty()) s += ' ';
    s += std::string(m.key()) + "=" + cell(&m.value());
  }
  return s.empty() ? "-" : s;
}

// "KEY=NUMBER" into body[KEY]: an integer when it is one, else a double.
void add_param(json::object& params, const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == kv.size())
    throw usage_error("--param '" + kv + "': expected KEY=NUMBER");
  const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (errno == 0 && *end == '\0') {
    params[key] = static_cast<int64_t>(n);
    return;
  }
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || end == text.c_str())
    throw usage_error("--param " + key + ": '" + text + "' is not a number");
  params[key] = d;
}

void print_tiers(const json::array& tiers) {
  Table t({"TIER", "POLICY", "PARAMS"});
  for (const json::value& e : tiers) {
    const json::object& o = e.as_object();
    t.add({cell(o, "tier"), cell(o, "policy"), params_text(object_at(o, "params"))});
  }
  t.print(std::cout);
}

}  // namespace

void add_policy(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("policy", "show and set each cache tier's eviction policy and its parameters");
  g->require_subcommand(1);

  CLI::App* show = g->add_subcommand("show", "each tier's policy, then the policies available with their defaults");
  show->callback([&ctx] {
    const json::value v = ctx.admin().get("/admin/policy");
    if (ctx.json()) return print_json(std::cout, v);
    const json::object& o = v.as_object();
    print_tiers(array_at(o, "tiers"));
    std::cout << '\n';
    Table a({"AVAILABLE", "PARAMS (DEFAULTS)", "DESCRIPTION"});
    for (const json::value& e : array_at(o, "available")) {
      const json::object& p = e.as_object();
      a.add({cell(p, "name"), params_text(object_at(p, "params")), cell(p, "description")});
    }
    a.print(std::cout);
  });

  struct SetArgs {
    std::string tier, policy;
    std::vector<std::string> params;
  };
  auto s = std::make_shared<SetArgs>();
  CLI::App* set = g->add_subcommand(
      "set", "give a tier an eviction policy; parameters not given take the policy's defaults (policy show)");
  set->add_option("tier", s->tier, "cache tier: device, host or disk")->required();
  set->add_option("policy", s->policy, "policy name (policy show lists them)")->required();
  set->add_option("--param", s->params, "a parameter as KEY=NUMBER; repeat for more")->type_name("KEY=NUMBER");
  set->callback([&ctx, s] {
    json::object params;
    for (const std::string& kv : s->params) add_param(params, kv);
    const json::value v = ctx.admin().put("/admin/policy/" + path_segment(s->tier),
                                          json::object{{"policy", s->policy}, {"params", params}});
    if (ctx.json()) return print_json(std::cout, v);
    print_tiers(json::array{v});
    if (const json::value* note = v.as_object().if_contains("note"); note && note->is_string())
      std::cout << note->as_string().c_str() << "\n";
  });
}

}  // namespace kvgatectl
