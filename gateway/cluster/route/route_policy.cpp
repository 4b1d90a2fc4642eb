#include "gateway/cluster/route/route_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "gateway/cluster/route/route_error.h"

namespace kvgate::route {
namespace {

using Params = std::map<std::string, double>;

// A policy's parameters: name -> default, in the order they are written back.
struct Known {
  std::string name;
  std::vector<std::pair<std::string, double>> params;
};

const std::vector<Known>& known() {
  static const CostWeights w;
  static const std::vector<Known> k = {
      {"cache_aware", {{"host", w.host}, {"disk", w.disk}, {"shared", w.shared}, {"load", w.load}}},
      {"round_robin", {}},
      {"random", {{"seed", 1}}},
  };
  return k;
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "name[:key=value,...]" into its entry of known() and every parameter's value.
std::pair<const Known*, Params> parse_spec(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string name(trim(spec.substr(0, colon)));
  const Known* info = nullptr;
  for (const Known& k : known())
    if (k.name == name) info = &k;
  if (!info) throw RouteError("unknown router '" + name + "' (routers: " + list(route_policy_names()) + ")");
  Params params(info->params.begin(), info->params.end());
  if (colon == std::string_view::npos) return {info, params};
  std::string_view rest = spec.substr(colon + 1);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view part = trim(rest.substr(0, comma));
    const size_t eq = part.find('=');
    const std::string key(trim(part.substr(0, eq)));
    if (!params.contains(key)) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : info->params) keys.push_back(k);
      throw RouteError("router " + name + " has no parameter '" + key + "'" +
                       (keys.empty() ? std::string(" (it has none)") : " (parameters: " + list(keys) + ")"));
    }
    const std::string_view text = eq == std::string_view::npos ? std::string_view{} : trim(part.substr(eq + 1));
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
      throw RouteError("router " + name + ": " + key + " must be a number >= 0, not '" + std::string(text) + "'");
    if (key == "seed" && v != std::floor(v)) throw RouteError("router " + name + ": the seed must be a whole number");
    params[key] = v;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return {info, params};
}

std::string spec_of(const Known& info, const Params& params) {
  std::string out = info.name;
  char sep = ':';
  for (const auto& [k, d] : info.params) out += sep + k + "=" + format_number(params.at(k)), sep = ',';
  return out;
}

class CacheAware final : public RoutePolicy {
 public:
  CacheAware(std::string name, const CostWeights& w) : name_(std::move(name)), w_(w) {}
  std::string name() const override { return name_; }

  std::optional<ReplicaId> choose(const RouteRequest& request, const ReplicaIndex& index,
                                  std::span<const ReplicaState> replicas) override {
    held_.resize(static_cast<size_t>(index.replica_slots()));
    index.lookup(request.chain, held_);
    chosen_at_.resize(replicas.size(), 0);
    std::optional<ReplicaId> best;
    double best_cost = 0;
    for (size_t r = 0; r < replicas.size(); ++r) {
      const ReplicaState& s = replicas[r];
      if (!s.live) continue;
      const Residency none;
      const Residency& held = s.scorable && r < held_.size() ? held_[r] : none;
      const double cost = route_cost(held, request, s, w_);
      if (best && !better(cost, r, best_cost, static_cast<size_t>(*best), replicas)) continue;
      best = static_cast<ReplicaId>(r);
      best_cost = cost;
    }
    if (best) chosen_at_[static_cast<size_t>(*best)] = ++decisions_;
    return best;
  }

 private:
  // Lower cost; then lower load; then chosen longer ago (or never).
  bool better(double cost, size_t r, double best_cost, size_t b, std::span<const ReplicaState> replicas) const {
    if (cost != best_cost) return cost < best_cost;
    if (replicas[r].load != replicas[b].load) return replicas[r].load < replicas[b].load;
    return chosen_at_[r] < chosen_at_[b];
  }

  std::string name_;
  CostWeights w_;
  std::vector<Residency> held_;
  std::vector<uint64_t> chosen_at_;  // per replica: the decision that last chose it (0: never)
  uint64_t decisions_ = 0;
};

class RoundRobin final : public RoutePolicy {
 public:
  std::string name() const override { return "round_robin"; }
  std::optional<ReplicaId> choose(const RouteRequest&, const ReplicaIndex&, std::span<const ReplicaState> replicas) override {
    for (size_t i = 0; i < replicas.size(); ++i) {
      const size_t r = (next_ + i) % replicas.size();
      if (!replicas[r].live) continue;
      next_ = r + 1;
      return static_cast<ReplicaId>(r);
    }
    return std::nullopt;
  }

 private:
  size_t next_ = 0;
};

class Random final : public RoutePolicy {
 public:
  Random(std::string name, uint64_t seed) : name_(std::move(name)), rng_(seed) {}
  std::string name() const override { return name_; }
  std::optional<ReplicaId> choose(const RouteRequest&, const ReplicaIndex&, std::span<const ReplicaState> replicas) override {
    live_.clear();
    for (size_t r = 0; r < replicas.size(); ++r)
      if (replicas[r].live) live_.push_back(static_cast<ReplicaId>(r));
    if (live_.empty()) return std::nullopt;
    return live_[std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng_)];
  }

 private:
  std::string name_;
  std::mt19937_64 rng_;
  std::vector<ReplicaId> live_;
};

}  // namespace

double route_cost(const Residency& held, const RouteRequest& request, const ReplicaState& replica,
                  const CostWeights& w) {
  // Restores are weighed per block of block_tokens; the last block of a
  // fully held prompt holds fewer, which over-weighs its restore by less
  // than one block.
  const auto tokens = [&](int32_t blocks) { return static_cast<double>(blocks) * request.block_tokens; };
  const double held_tokens = std::min(tokens(held.blocks()), static_cast<double>(request.prompt_tokens));
  const double fresh = static_cast<double>(request.prompt_tokens) - held_tokens;
  return fresh + w.host * tokens(held.host) + w.disk * tokens(held.disk) + w.shared * tokens(held.shared) +
         w.load * static_cast<double>(replica.load);
}

const std::vector<std::string>& route_policy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Known& k : known()) out.push_back(k.name);
    return out;
  }();
  return names;
}

std::unique_ptr<RoutePolicy> make_route_policy(std::string_view spec) {
  const auto [info, p] = parse_spec(spec);
  const std::string name = spec_of(*info, p);
  if (info->name == "cache_aware")
    return std::make_unique<CacheAware>(name, CostWeights{p.at("host"), p.at("disk"), p.at("shared"), p.at("load")});
  if (info->name == "round_robin") return std::make_unique<RoundRobin>();
  return std::make_unique<Random>(name, static_cast<uint64_t>(p.at("seed")));
}

std::vector<std::string> parse_route_list(std::string_view text) {
  if (trim(text) == "all") return route_policy_names();
  std::vector<std::string> specs;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view t = trim(text.substr(start, comma - start));
    start = comma + 1;
    const bool more_params = t.find('=') != std::string_view::npos && t.find(':') == std::string_view::npos;
    if (more_params && !specs.empty()) specs.back().append(",").append(t);
    else if (more_params) throw RouteError("'" + std::string(t) + "' is a parameter with no router before it");
    else if (t.empty()) throw RouteError("an empty router in the list '" + std::string(text) + "'");
    else specs.emplace_back(t);
  }
  for (const std::string& s : specs) parse_spec(s);
  return specs;
}

}  // namespace kvgate::route
