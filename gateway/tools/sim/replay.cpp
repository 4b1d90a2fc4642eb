// replay() of replay.h: the checks, and one TierChain over the trace.
#include "gateway/tools/sim/replay.h"

#include <chrono>
#include <limits>

#include "base/error.h"
#include "gateway/tools/sim/tier_chain.h"

namespace kvgate::sim {

using policies::Tier;

void check_config(const ReplayTrace& trace, const ReplayConfig& c) {
  if (c.tiers.empty()) throw Error("sim: no tiers (the device tier at least)");
  if (c.tiers.front().tier != Tier::kDevice) throw Error("sim: the first tier must be the device");
  for (size_t t = 0; t < c.tiers.size(); ++t) {
    if (c.tiers[t].blocks < 1) throw Error("sim: the " + std::string(tier_name(c.tiers[t].tier)) + " tier needs at least one block");
    if (t > 0 && c.tiers[t].tier <= c.tiers[t - 1].tier)
      throw Error("sim: tiers go device, host, disk, each at most once");
  }
  if (c.tiers.front().blocks + trace.max_chain() > std::numeric_limits<int32_t>::max())
    throw Error("sim: the device capacity is too large for a block pool");
  if (c.repeat < 1) throw Error("sim: --repeat must be at least 1");
  if (static_cast<int64_t>(c.repeat) * trace.id_limit() > std::numeric_limits<int32_t>::max())
    throw Error("sim: " + std::to_string(c.repeat) + " copies of this trace need more than 31-bit hash ids");
  if (static_cast<int64_t>(c.repeat) * trace.requests() > std::numeric_limits<int32_t>::max())
    throw Error("sim: too many requests for one replay");
  if (!(c.depth_weight >= 0)) throw Error("sim: the depth weight must be >= 0");
}

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::kDevice: return "device";
    case Tier::kHost: return "host";
    case Tier::kDisk: return "disk";
  }
  return "?";
}

ReplayResult replay(const ReplayTrace& trace, const ReplayConfig& config) {
  check_config(trace, config);
  TierChain chain(trace, config);
  const auto start = std::chrono::steady_clock::now();
  for (int32_t copy = 0; copy < config.repeat; ++copy)
    for (int64_t r = 0; r < trace.requests(); ++r) chain.serve(copy, r);
  ReplayResult out = chain.result();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kvgate::sim
