// What `kvgate sim` prints: a markdown table per capacity (policy, token-
// and block-weighted hit rates, per tier when there are tiers, the
// prefill-weighted rate, the gap to Belady in points, replay time), or with
// --replicas one per replica count, capacity and policy (router, cluster hit
// rates, the share of one cache's rate, load balance); or the same as JSON;
// and how it reads capacities ("1828", "1%") and tier lists
// ("device:1%,host:9140").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/tools/sim/cluster_replay.h"
#include "gateway/tools/sim/replay.h"
#include "gateway/tools/sim/replay_trace.h"

namespace kvgate::sim {

struct SimTable {
  std::vector<TierSpec> tiers;
  std::vector<ReplayResult> results;  // one per policy; the Belady bound among them
};

// N replicas of `tiers` each, one row per router, next to one cache of N x
// `tiers` under the same policy.
struct ClusterTable {
  int32_t replicas = 1;
  std::vector<TierSpec> tiers;  // per replica
  ReplayResult one_cache;
  std::vector<ClusterResult> routed;
};

struct SimRun {
  std::string trace;  // its path, as given
  TraceSummary summary;
  int32_t repeat = 1;
  double depth_weight = 0.02;
  std::vector<SimTable> tables;
  std::vector<ClusterTable> clusters;  // with --replicas, instead of tables
};

// A block count ("1828") or a share of the trace's distinct blocks ("1%",
// "0.5%", rounded to the nearest block). Throws kvgate::Error naming the text.
int64_t parse_capacity(std::string_view text, int64_t distinct_blocks);
// "device:N[,host:M[,disk:K]]", each capacity as parse_capacity reads it.
std::vector<TierSpec> parse_tiers(std::string_view text, int64_t distinct_blocks);

std::string format_markdown(const SimRun& run);
boost::json::object to_json(const SimRun& run);

}  // namespace kvgate::sim
