// quotas show TENANT | set TENANT --FLAG N...
#include <iostream>
#include <memory>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"
#include "ops/kvgatectl/quota_flags.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

void print_quotas(const Context& ctx, const json::value& tenant) {
  if (ctx.json()) return print_json(std::cout, tenant);
  const json::object& q = object_at(tenant.as_object(), "quotas");
  Table t({"QUOTA", "VALUE"});
  for (const QuotaFlag& f : quota_flags()) {
    const int64_t n = integer(q, f.key);
    const std::string key = f.key;
    t.add({key, key == "cached_token_weight_permille" ? std::to_string(n) : limit_text(n)});
  }
  t.print(std::cout);
}

}  // namespace

void add_quotas(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("quotas", "show and set a tenant's quotas (0 = unlimited)");
  g->require_subcommand(1);

  CLI::App* show = g->add_subcommand("show", "show a tenant's quotas");
  auto id = std::make_shared<std::string>();
  show->add_option("tenant", *id, "tenant id")->required();
  show->callback([&ctx, id] { print_quotas(ctx, ctx.admin().get("/admin/tenants/" + path_segment(*id))); });

  struct SetArgs {
    std::string tenant;
    QuotaValues quotas;
  };
  auto s = std::make_shared<SetArgs>();
  CLI::App* set = g->add_subcommand("set", "change some of a tenant's quotas (the others stay); enforced at once");
  set->add_option("tenant", s->tenant, "tenant id")->required();
  s->quotas.add_to(*set);
  set->callback([&ctx, s] {
    if (!s->quotas.any()) throw usage_error("quotas set: give at least one quota, e.g. --requests-per-minute 60");
    print_quotas(ctx, ctx.admin().patch("/admin/tenants/" + path_segment(s->tenant),
                                        json::object{{"quotas", s->quotas.json()}}));
  });
}

}  // namespace kvgatectl
