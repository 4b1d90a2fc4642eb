// usage report TENANT [--from T] [--to T | --last D] | export TENANT ... [--output FILE]
// From the ledger: what a tenant's requests used and cost over a period.
#include <fstream>
#include <iostream>
#include <memory>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"
#include "ops/kvgatectl/time_args.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

struct Period {
  std::string from, to, last;

  void add_to(CLI::App& c) {
    auto* f = c.add_option("--from", from, "start of the period, inclusive (default: 30 days ago)")->type_name("TIME");
    c.add_option("--to", to, "end of the period, exclusive (default: now)")->type_name("TIME");
    c.add_option("--last", last, "the period ending now (or at --to) this long, e.g. 24h or 7d")
        ->type_name("DURATION")
        ->excludes(f);
  }

  // "&start_time=S&end_time=E", each only when it was given.
  std::string query() const {
    std::string q;
    std::optional<int64_t> end;
    if (!to.empty()) end = parse_time("--to", to);
    if (!from.empty()) q += "&start_time=" + std::to_string(parse_time("--from", from));
    if (!last.empty()) {
      const int64_t e = end.value_or(now_unix_seconds());
      q += "&start_time=" + std::to_string(e - parse_duration("--last", last));
    }
    if (end) q += "&end_time=" + std::to_string(*end);
    return q;
  }
};

const char* const kTotals[] = {"requests",
                               "prompt_tokens",
                               "cached_tokens",
                               "fresh_prefill_tokens",
                               "cache_written_tokens",
                               "cache_write_5m_tokens",
                               "cache_write_1h_tokens",
                               "completion_tokens"};

// Totals are either the object's own members or under "totals".
const json::object& totals_of(const json::object& o) {
  const json::object& t = object_at(o, "totals");
  return t.empty() ? o : t;
}

void print_report(const json::object& o) {
  const json::object& t = totals_of(o);
  Fields f;
  if (o.contains("tenant")) f.emplace_back("tenant", cell(o, "tenant"));
  if (o.contains("start_time") || o.contains("end_time"))
    f.emplace_back("period", utc_from_ns(integer(o, "start_time") * 1000000000) + " .. " +
                                 utc_from_ns(integer(o, "end_time") * 1000000000));
  for (const char* k : kTotals) f.emplace_back(k, cell(t, k));
  f.emplace_back("cost", usd_from_micros(integer(t, "cost_micros")));
  print_fields(std::cout, f);

  std::cout << '\n';
  Table d({"DATE", "REQUESTS", "PROMPT", "CACHED", "FRESH", "WRITTEN", "PIN_5M", "PIN_1H", "COMPLETION", "COST"});
  for (const json::value& e : array_at(o, "by_day")) {
    const json::object& day = e.as_object();
    const json::object& dt = totals_of(day);
    std::vector<std::string> row = {cell(day, "date")};
    for (const char* k : kTotals) row.push_back(cell(dt, k));
    row.push_back(usd_from_micros(integer(dt, "cost_micros")));
    d.add(std::move(row));
  }
  d.print(std::cout);
}

}  // namespace

void add_usage(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("usage", "a tenant's usage and cost from the ledger: a report, or CSV");
  g->require_subcommand(1);

  struct Args {
    std::string tenant, output;
    Period period;
  };
  auto r = std::make_shared<Args>();
  CLI::App* report = g->add_subcommand("report", "totals over a period and one row per UTC day");
  report->add_option("tenant", r->tenant, "tenant id")->required();
  r->period.add_to(*report);
  report->callback([&ctx, r] {
    const json::value v = ctx.admin().get("/admin/usage?tenant=" + query_value(r->tenant) + r->period.query());
    if (ctx.json()) return print_json(std::cout, v);
    print_report(v.as_object());
  });

  auto x = std::make_shared<Args>();
  CLI::App* exp = g->add_subcommand("export", "the ledger's records as CSV: a header row, then one row per request");
  exp->add_option("tenant", x->tenant, "tenant id")->required();
  x->period.add_to(*exp);
  exp->add_option("--output,-o", x->output, "write the CSV to FILE (default: stdout)")->type_name("FILE");
  exp->callback([&ctx, x] {
    const std::string csv =
        ctx.admin().get_text("/admin/usage?tenant=" + query_value(x->tenant) + x->period.query() + "&format=csv");
    if (x->output.empty()) {
      std::cout << csv;
      return;
    }
    std::ofstream out(x->output, std::ios::binary | std::ios::trunc);
    if (!(out << csv) || !out.flush()) throw usage_error("--output " + x->output + ": cannot write it");
  });
}

}  // namespace kvgatectl
