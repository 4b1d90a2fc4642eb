// prices show [PLAN] | set PLAN --fresh-input-per-mtok N --output-per-mtok N ...
// Prices are integers in micro-dollars per million tokens, as the admin API
// keeps them; the table also shows them in dollars.
#include <iostream>
#include <memory>
#include <optional>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

const char* const kPriceKeys[] = {"fresh_input_per_mtok",    "cached_input_per_mtok",   "cache_write_per_mtok",
                                  "cache_write_5m_per_mtok", "cache_write_1h_per_mtok", "output_per_mtok"};

void print_plans(const std::vector<const json::object*>& plans) {
  Table t({"PLAN", "FRESH_INPUT", "CACHED_INPUT", "CACHE_WRITE", "PIN_WRITE_5M", "PIN_WRITE_1H", "OUTPUT"});
  for (const json::object* p : plans) {
    std::vector<std::string> row = {cell(*p, "id")};
    for (const char* k : kPriceKeys) row.push_back(usd_from_micros(integer(*p, k)));
    t.add(std::move(row));
  }
  t.print(std::cout);
  std::cout << "(dollars per million tokens)\n";
}

}  // namespace

void add_prices(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("prices", "show and set price plans (what a tenant's plan charges)");
  g->require_subcommand(1);

  CLI::App* show = g->add_subcommand("show", "show every price plan, or one");
  auto plan_id = std::make_shared<std::string>();
  show->add_option("plan", *plan_id, "plan id (default: all)");
  show->callback([&ctx, plan_id] {
    const json::value v = ctx.admin().get("/admin/plans");
    std::vector<const json::object*> plans;
    for (const json::value& e : array_at(v.as_object(), "data"))
      if (plan_id->empty() || cell(e.as_object(), "id") == *plan_id) plans.push_back(&e.as_object());
    if (!plan_id->empty() && plans.empty()) throw refused("no price plan '" + *plan_id + "' (prices show lists them)");
    if (ctx.json()) return print_json(std::cout, plan_id->empty() ? v : json::value(*plans.front()));
    print_plans(plans);
  });

  struct SetArgs {
    std::string plan;
    int64_t fresh = 0, output = 0;
    std::optional<int64_t> cached, write, write_5m, write_1h;
  };
  auto s = std::make_shared<SetArgs>();
  CLI::App* set = g->add_subcommand(
      "set", "create or replace a price plan; the next request of every tenant on it is billed at these prices");
  set->add_option("plan", s->plan, "plan id")->required();
  set->add_option("--fresh-input-per-mtok", s->fresh, "micro-dollars per million prompt tokens prefilled fresh")
      ->required();
  set->add_option("--output-per-mtok", s->output, "micro-dollars per million generated tokens")->required();
  set->add_option("--cached-input-per-mtok", s->cached,
                  "micro-dollars per million prompt tokens served from the cache (default: 10% of fresh)");
  set->add_option("--cache-write-per-mtok", s->write,
                  "micro-dollars per million tokens written to the cache, on top of fresh (default: 0)");
  set->add_option("--cache-write-5m-per-mtok", s->write_5m,
                  "micro-dollars per million prompt tokens written under a pin of up to 5 minutes, instead of fresh "
                  "(default: 1.25x fresh)");
  set->add_option("--cache-write-1h-per-mtok", s->write_1h,
                  "micro-dollars per million prompt tokens written under a longer pin, instead of fresh "
                  "(default: 2x fresh)");
  set->callback([&ctx, s] {
    json::object body{{"fresh_input_per_mtok", s->fresh}, {"output_per_mtok", s->output}};
    if (s->cached) body["cached_input_per_mtok"] = *s->cached;
    if (s->write) body["cache_write_per_mtok"] = *s->write;
    if (s->write_5m) body["cache_write_5m_per_mtok"] = *s->write_5m;
    if (s->write_1h) body["cache_write_1h_per_mtok"] = *s->write_1h;
    const json::value v = ctx.admin().put("/admin/plans/" + path_segment(s->plan), body);
    if (ctx.json()) return print_json(std::cout, v);
    print_plans({&v.as_object()});
  });
}

}  // namespace kvgatectl
