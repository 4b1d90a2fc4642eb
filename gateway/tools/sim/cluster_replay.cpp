#include "gateway/tools/sim/cluster_replay.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <queue>

#include "base/error.h"
#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_policy.h"
#include "gateway/tools/sim/tier_chain.h"

namespace kvgate::sim {
namespace {

// One replica's decode load: the requests still decoding, by when they end.
class DecodeLoad {
 public:
  // The load at `now_ms`, after the requests that ended by then are gone.
  int64_t at(double now_ms) {
    while (!ends_.empty() && ends_.top().end_ms <= now_ms) {
      tokens_ -= ends_.top().tokens;
      ends_.pop();
    }
    return tokens_;
  }
  void add(double end_ms, int64_t tokens) {
    ends_.push({end_ms, tokens});
    tokens_ += tokens;
  }

 private:
  struct Decoding {
    double end_ms;
    int64_t tokens;
    bool operator>(const Decoding& o) const { return end_ms > o.end_ms; }
  };
  std::priority_queue<Decoding, std::vector<Decoding>, std::greater<>> ends_;
  int64_t tokens_ = 0;
};

void add_to(ReplayResult& total, const ReplayResult& r) {
  total.requests += r.requests, total.tokens += r.tokens, total.blocks += r.blocks;
  total.hit_tokens += r.hit_tokens, total.hit_blocks += r.hit_blocks;
  total.prefill += r.prefill, total.hit_prefill += r.hit_prefill;
  total.evictions += r.evictions;
  total.tiers.resize(r.tiers.size());
  for (size_t t = 0; t < r.tiers.size(); ++t) total.tiers[t].tokens += r.tiers[t].tokens, total.tiers[t].blocks += r.tiers[t].blocks;
}

}  // namespace

double ClusterResult::balance() const {
  if (requests.empty()) return 0;
  int64_t sum = 0;
  for (int64_t n : requests) sum += n;
  if (sum == 0) return 0;
  const double mean = static_cast<double>(sum) / static_cast<double>(requests.size());
  return static_cast<double>(*std::max_element(requests.begin(), requests.end())) / mean;
}

ClusterResult replay_cluster(const ReplayTrace& trace, const ClusterConfig& config) {
  if (config.replicas < 1 || config.replicas > route::ReplicaIndex::kMaxReplicas)
    throw Error("sim: --replicas must be 1 to " + std::to_string(route::ReplicaIndex::kMaxReplicas) + ", not " +
                std::to_string(config.replicas));
  if (config.replica.policy.name == "belady")
    throw Error("sim: the Belady bound needs each replica's future, which routing decides: not with --replicas");
  if (!(config.decode_tokens_per_s > 0) || !(config.prefill_tokens_per_s > 0))
    throw Error("sim: the prefill and decode rates must be > 0 tokens/s");
  check_config(trace, config.replica);
  std::unique_ptr<route::RoutePolicy> router = route::make_route_policy(config.router);

  route::ReplicaIndex index(config.replicas);
  std::vector<std::unique_ptr<TierChain>> replicas;
  std::vector<route::ReplicaState> state(static_cast<size_t>(config.replicas));
  std::vector<DecodeLoad> load(static_cast<size_t>(config.replicas));
  for (int32_t i = 0; i < config.replicas; ++i) {
    const route::ReplicaId id = index.add_replica();
    replicas.push_back(std::make_unique<TierChain>(trace, config.replica, IndexFeed{&index, id}));
    state[static_cast<size_t>(id)].live = true;
  }

  ClusterResult out;
  out.router = router->name();
  out.requests.assign(static_cast<size_t>(config.replicas), 0);
  const double copy_ms = static_cast<double>(trace.arrival_ms(trace.requests() - 1) + 1);
  std::vector<cache::BlockHash> links;
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration routing{};
  for (int32_t copy = 0; copy < config.replica.repeat; ++copy)
    for (int64_t r = 0; r < trace.requests(); ++r) {
      const double now = copy * copy_ms + static_cast<double>(trace.arrival_ms(r));
      for (size_t i = 0; i < load.size(); ++i) state[i].load = load[i].at(now);
      const auto chain = trace.chain(r);
      const int64_t offset = static_cast<int64_t>(copy) * trace.id_limit();
      links.clear();
      for (int32_t id : chain) links.push_back(trace_link(offset + id));
      const route::RouteRequest request{links, trace.input_tokens(r), static_cast<int32_t>(kTraceBlockTokens)};
      const auto t0 = std::chrono::steady_clock::now();
      const std::optional<route::ReplicaId> to = router->choose(request, index, state);
      routing += std::chrono::steady_clock::now() - t0;
      if (!to) throw std::logic_error("sim: the router chose no replica among live ones");
      const auto at = static_cast<size_t>(*to);
      const int64_t hits_before = replicas[at]->result().hit_tokens;
      replicas[at]->serve(copy, r);
      ++out.requests[at];
      const auto fresh = static_cast<double>(trace.input_tokens(r) - (replicas[at]->result().hit_tokens - hits_before));
      const double busy_ms = 1000.0 * (fresh / config.prefill_tokens_per_s +
                                       static_cast<double>(trace.output_tokens(r)) / config.decode_tokens_per_s);
      load[at].add(now + busy_ms, trace.input_tokens(r) + trace.output_tokens(r));
    }
  out.total.tiers.resize(config.replica.tiers.size());
  for (const auto& rep : replicas) add_to(out.total, rep->result());
  out.total.policy = replicas.front()->result().policy;
  out.total.params = replicas.front()->result().params;
  out.total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.route_seconds = std::chrono::duration<double>(routing).count();
  return out;
}

}  // namespace kvgate::sim
