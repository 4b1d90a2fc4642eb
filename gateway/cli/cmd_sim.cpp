// kvgate sim: replays a Mooncake request trace through the prefix cache the
// server runs (cache::BlockPool, the policies of policies/eviction/) and
// prints hit rates per policy and capacity next to the offline Belady bound.
// What it models and how: gateway/sim/replay.h, docs/policies.md.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "engine/error.h"
#include "gateway/cli/commands.h"
#include "gateway/sim/replay.h"
#include "gateway/sim/replay_trace.h"
#include "gateway/sim/sim_report.h"
#include "policies/eviction/policy_error.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::cli {
namespace {

struct SimOptions {
  std::string trace;
  std::vector<std::string> capacities;
  std::vector<std::string> policies;
  std::vector<std::string> tiers;
  std::string lower_policy;
  int32_t repeat = 1;
  double depth_weight = 0.02;
  bool json = false;
};

std::vector<policies::PolicySpec> chosen_policies(const SimOptions& o) {
  std::vector<policies::PolicySpec> specs;
  for (const std::string& text : o.policies)
    for (auto& spec : policies::parse_policy_list(text)) specs.push_back(std::move(spec));
  if (specs.empty()) specs = policies::parse_policy_list("lru,s3fifo,cost");
  // Every table shows the bound, last.
  std::erase_if(specs, [](const policies::PolicySpec& s) { return s.name == "belady"; });
  specs.push_back({"belady", {}});
  return specs;
}

void run(const SimOptions& o) {
  if (o.capacities.empty() && o.tiers.empty()) throw Error("sim: give --capacity BLOCKS (or N%) or --tiers device:N,...");
  const std::vector<policies::PolicySpec> specs = chosen_policies(o);
  const sim::ReplayTrace trace = sim::read_replay_trace(o.trace);
  sim::SimRun out{o.trace, sim::summarize(trace), o.repeat, o.depth_weight, {}};
  std::vector<std::vector<sim::TierSpec>> layouts;
  for (const std::string& c : o.capacities)
    layouts.push_back({{policies::Tier::kDevice, sim::parse_capacity(c, out.summary.distinct_blocks)}});
  for (const std::string& t : o.tiers) layouts.push_back(sim::parse_tiers(t, out.summary.distinct_blocks));

  std::optional<policies::PolicySpec> lower;
  if (!o.lower_policy.empty()) {
    lower = policies::parse_policy_spec(o.lower_policy);
    if (lower->name == "belady") throw Error("sim: --lower-policy belady: the bound is the bound on every tier already");
  }
  // The cost-aware policy weighs a restore from the tier below only if it
  // knows there is one.
  const auto tiered = [](policies::PolicySpec spec, size_t tiers) {
    if (spec.name == "cost" && tiers > 1 && !spec.params.contains("last_tier"))
      spec.params["last_tier"] = static_cast<double>(tiers - 1);
    return spec;
  };
  for (const auto& tiers : layouts) {
    sim::SimTable table{tiers, {}};
    for (const policies::PolicySpec& spec : specs) {
      sim::ReplayConfig config{tiers, tiered(spec, tiers.size()), {}, o.repeat, o.depth_weight};
      if (lower) config.lower_policy = tiered(*lower, tiers.size());
      table.results.push_back(sim::replay(trace, config));
    }
    out.tables.push_back(std::move(table));
  }
  if (o.json) std::printf("%s\n", boost::json::serialize(sim::to_json(out)).c_str());
  else std::printf("%s", sim::format_markdown(out).c_str());
}

}  // namespace

void add_sim(CLI::App& app) {
  auto o = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "replays a Mooncake trace through the prefix cache and its eviction policies: hit rates per policy and "
             "capacity, next to the offline Belady bound");
  cmd->add_option("--trace", o->trace, "Mooncake JSONL trace (hash ids of 512-token blocks)")->required();
  auto* capacity = cmd->add_option("--capacity", o->capacities,
                                   "device capacities, comma-separated: block counts or shares of the trace's distinct "
                                   "blocks (1828,9140 or 1%,5%,10%); one table each")
                       ->delimiter(',');
  cmd->add_option("--policy", o->policies,
                  "policies, comma-separated, each NAME or NAME:key=value,... (default lru,s3fifo,cost); belady is "
                  "always added");
  auto* tiers = cmd->add_option("--tiers", o->tiers,
                                "device:N,host:M[,disk:K] (capacities as for --capacity): device victims fall to host, "
                                "host victims to disk; repeat the flag for several tables");
  capacity->excludes(tiers);
  cmd->add_option("--lower-policy", o->lower_policy,
                  "the host and disk tiers' policy, NAME or NAME:key=value,... (default: each row's own)")
      ->needs(tiers);
  cmd->add_option("--repeat", o->repeat, "replay N back-to-back copies of the trace, each with its own hash ids")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--depth-weight", o->depth_weight,
                  "prefill weight per level of depth for the prefill-weighted hit rate (default 0.02)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json, "print JSON instead of markdown tables");
  cmd->footer("\nEviction policies (--policy NAME or NAME:key=value,...; defaults shown):\n" +
              policies::describe_eviction_policies());
  cmd->callback([o] {
    try {
      run(*o);
    } catch (const policies::PolicyError& e) {
      throw Error(e.what());
    }
  });
}

}  // namespace kvgate::cli
