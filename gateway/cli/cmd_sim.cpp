// kvgate sim: replays a Mooncake request trace through the prefix cache the
// server runs (cache::BlockPool, the policies of policies/eviction/) and
// prints hit rates per policy and capacity next to the offline Belady bound;
// with --replicas, over N replicas behind a router (gateway/route/) next to
// one cache of the same total capacity. What it models and how:
// gateway/sim/replay.h, gateway/sim/cluster_replay.h, docs/policies.md.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "gateway/cli/commands.h"
#include "gateway/cluster/route/route_error.h"
#include "gateway/cluster/route/route_policy.h"
#include "gateway/tools/sim/cluster_replay.h"
#include "gateway/tools/sim/replay.h"
#include "gateway/tools/sim/replay_trace.h"
#include "gateway/tools/sim/sim_report.h"
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
  std::vector<int32_t> replicas;
  std::vector<std::string> routers;
  bool json = false;
};

std::vector<policies::PolicySpec> chosen_policies(const SimOptions& o) {
  std::vector<policies::PolicySpec> specs;
  for (const std::string& text : o.policies)
    for (auto& spec : policies::parse_policy_list(text)) specs.push_back(std::move(spec));
  if (specs.empty()) specs = policies::parse_policy_list("lru,s3fifo,cost");
  // Every table shows the bound, last; a routed replay cannot have it.
  const bool had_bound = std::erase_if(specs, [](const policies::PolicySpec& s) { return s.name == "belady"; }) > 0;
  if (o.replicas.empty()) specs.push_back({"belady", {}});
  else if (had_bound)
    throw Error("sim: --policy belady: the bound needs each replica's future, which routing decides: not with --replicas");
  return specs;
}

std::vector<std::string> chosen_routers(const SimOptions& o) {
  std::vector<std::string> out;
  for (const std::string& text : o.routers)
    for (auto& spec : route::parse_route_list(text)) out.push_back(std::move(spec));
  return out.empty() ? route::route_policy_names() : out;
}

// The cost-aware policy weighs a restore from the tier below only if it
// knows there is one.
policies::PolicySpec tiered(policies::PolicySpec spec, size_t tiers) {
  if (spec.name == "cost" && tiers > 1 && !spec.params.contains("last_tier"))
    spec.params["last_tier"] = static_cast<double>(tiers - 1);
  return spec;
}

using Layouts = std::vector<std::vector<sim::TierSpec>>;

// One table per layout: every policy, the bound last.
void run_tables(const SimOptions& o, const sim::ReplayTrace& trace, const Layouts& layouts,
                const std::vector<policies::PolicySpec>& specs, const std::optional<policies::PolicySpec>& lower,
                sim::SimRun& out) {
  for (const auto& tiers : layouts) {
    sim::SimTable table{tiers, {}};
    for (const policies::PolicySpec& spec : specs) {
      sim::ReplayConfig config{tiers, tiered(spec, tiers.size()), {}, o.repeat, o.depth_weight};
      if (lower) config.lower_policy = tiered(*lower, tiers.size());
      table.results.push_back(sim::replay(trace, config));
    }
    out.tables.push_back(std::move(table));
  }
}

// One table per replica count, layout (per replica) and policy: one cache
// of N times the layout, then every router over N replicas.
void run_clusters(const SimOptions& o, const sim::ReplayTrace& trace, const Layouts& layouts,
                  const std::vector<policies::PolicySpec>& specs, const std::optional<policies::PolicySpec>& lower,
                  sim::SimRun& out) {
  const std::vector<std::string> routers = chosen_routers(o);
  for (int32_t n : o.replicas)
    for (const auto& tiers : layouts)
      for (const policies::PolicySpec& spec : specs) {
        sim::ReplayConfig each{tiers, tiered(spec, tiers.size()), {}, o.repeat, o.depth_weight};
        if (lower) each.lower_policy = tiered(*lower, tiers.size());
        sim::ReplayConfig one = each;
        for (sim::TierSpec& t : one.tiers) t.blocks *= n;
        sim::ClusterTable table{n, tiers, sim::replay(trace, one), {}};
        for (const std::string& router : routers) table.routed.push_back(sim::replay_cluster(trace, {each, n, router}));
        out.clusters.push_back(std::move(table));
      }
}

void run(const SimOptions& o) {
  if (o.capacities.empty() && o.tiers.empty()) throw Error("sim: give --capacity BLOCKS (or N%) or --tiers device:N,...");
  const std::vector<policies::PolicySpec> specs = chosen_policies(o);
  const sim::ReplayTrace trace = sim::read_replay_trace(o.trace);
  sim::SimRun out{o.trace, sim::summarize(trace), o.repeat, o.depth_weight, {}, {}};
  Layouts layouts;
  for (const std::string& c : o.capacities)
    layouts.push_back({{policies::Tier::kDevice, sim::parse_capacity(c, out.summary.distinct_blocks)}});
  for (const std::string& t : o.tiers) layouts.push_back(sim::parse_tiers(t, out.summary.distinct_blocks));

  std::optional<policies::PolicySpec> lower;
  if (!o.lower_policy.empty()) {
    lower = policies::parse_policy_spec(o.lower_policy);
    if (lower->name == "belady") throw Error("sim: --lower-policy belady: the bound is the bound on every tier already");
  }
  if (o.replicas.empty()) run_tables(o, trace, layouts, specs, lower, out);
  else run_clusters(o, trace, layouts, specs, lower, out);
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
  cmd->add_option("--replicas", o->replicas,
                  "replay over N replicas (comma-separated for several), each with the given capacity (or tiers), "
                  "behind a router, next to one cache of N times that capacity; no Belady bound")
      ->delimiter(',')
      ->check(CLI::Range(1, route::ReplicaIndex::kMaxReplicas));
  auto* routers = cmd->add_option("--router", o->routers,
                                  "with --replicas: routers, comma-separated, each NAME or NAME:key=value,...; or all "
                                  "(the default): " + [] {
                                    std::string names;
                                    for (const auto& n : route::route_policy_names()) names += (names.empty() ? "" : ", ") + n;
                                    return names;
                                  }());
  routers->needs(cmd->get_option("--replicas"));
  cmd->add_flag("--json", o->json, "print JSON instead of markdown tables");
  cmd->footer("\nEviction policies (--policy NAME or NAME:key=value,...; defaults shown):\n" +
              policies::describe_eviction_policies());
  cmd->callback([o] {
    try {
      run(*o);
    } catch (const policies::PolicyError& e) {
      throw Error(e.what());
    } catch (const route::RouteError& e) {
      throw Error(std::string("sim: ") + e.what());
    }
  });
}

}  // namespace kvgate::cli
