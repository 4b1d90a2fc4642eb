#include "policies/eviction/policy_registry.h"

#include <charconv>
#include <cmath>

#include "policies/eviction/belady_policy.h"
#include "policies/eviction/convo_policy.h"
#include "policies/eviction/cost_aware_policy.h"
#include "policies/eviction/lru_policy.h"
#include "policies/eviction/param_check.h"
#include "policies/eviction/reuse_policy.h"
#include "policies/eviction/s3fifo_policy.h"
#include "policies/eviction/tenant_fair_policy.h"

namespace kvgate::policies {
namespace {

// S3-FIFO's parameters, which convo takes too (its other blocks are an S3-FIFO).
std::vector<PolicyParamInfo> s3fifo_param_info() {
  const S3FifoParams s3;
  return {{"small", s3.small, "the small queue's starting share of the cached blocks"},
          {"ghost", s3.ghost, "blocks evicted from the small queue that are remembered, x the cached blocks"},
          {"window", s3.window, "a ghost hit resizes the queues if it returns within window x cached blocks evictions"},
          {"step", s3.step, "blocks the small queue's target moves per such ghost hit"},
          {"adapt", s3.adapt ? 1.0 : 0.0, "1: the small queue sizes itself; 0: it keeps its starting share", true}};
}

S3FifoParams s3fifo_params_of(const PolicyParams& p) {
  return {p.at("small"), p.at("ghost"), p.at("window"), p.at("step"), p.at("adapt") != 0};
}

std::vector<PolicyInfo> build_catalog() {
  const std::vector<PolicyParamInfo> s3fifo_params = s3fifo_param_info();
  const CostAwareParams cost;
  const ReuseParams reuse;
  return {
      {"lru", "least recently released first (the baseline; a chain's tail goes before its head)", {}, true},
      {"s3fifo",
       "S3-FIFO: first-use blocks wait in a small FIFO and leave first unless hit there; blocks hit, or back "
       "while still remembered in the ghost list, live in the main LRU queue; the small queue sizes itself by "
       "ghost hits",
       s3fifo_params,
       true},
      {"cost",
       "cost-aware GreedyDual: keeps the blocks whose eviction would cost most (hits x the prefill at their "
       "depth, or the restore from the tier below), aged by an inflation clock; a parent never goes before its "
       "child",
       {{"depth_weight", cost.depth_weight, "extra prefill per level of depth, in depth-0 blocks"},
        {"restore_host", cost.restore_host, "cost of restoring a block from host memory, in depth-0 block prefills"},
        {"restore_disk", cost.restore_disk, "cost of restoring a block from disk, in depth-0 block prefills"},
        {"last_tier", static_cast<double>(cost.last_tier), "the lowest tier there is: 0 device, 1 host, 2 disk", true},
        {"max_hits", static_cast<double>(cost.max_hits), "uses counted per block", true}},
       true},
      {"fair",
       "tenant-fair sharing: each tenant holding blocks is owed an equal share of the tier, and the tenant "
       "furthest over its share gives up a block first, chosen by that tenant's own policy",
       {{"base", 1, "each tenant's own policy: 0 lru, 1 s3fifo, 2 cost (their default parameters)", true}},
       true},
      {"reuse",
       "reuse-time learning: blocks are classed by the request that released them (its last block or not, "
       "the conversation's turn, the blocks it added); per class it learns after how many releases blocks are "
       "used again, and evicts the chain with the lowest chance of reuse per cache time it would take, tail first",
       {{"ghost", reuse.ghost, "evicted blocks remembered (to learn their reuse), x the cached blocks"},
        {"base", reuse.base, "the first idle-time bucket, in block releases"},
        {"growth", reuse.growth, "each further idle-time bucket is this much wider"},
        {"period", reuse.period, "block releases between recomputing what was learned", true},
        {"halflife", reuse.halflife, "block releases after which past reuses count half; 0: they never fade"}},
       true},
      {"convo",
       "S3-FIFO that evicts first each request's last block past the shared first one (partial: the "
       "conversation's next turn replaces it); the other blocks as s3fifo",
       s3fifo_params,
       true},
      {"belady",
       "the offline bound (kvgate sim only): evicts the block whose next use is farthest away, the deeper on a tie",
       {},
       false},
  };
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& n : list) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string known_policies() {
  std::vector<std::string> list;
  for (const auto& p : eviction_policies()) list.push_back(p.name + (p.online ? "" : " (offline, kvgate sim only)"));
  return names(list);
}

const PolicyInfo& known(std::string_view name) {
  if (name.empty()) throw PolicyError("an eviction policy needs a name (known: " + known_policies() + ")");
  const PolicyInfo* info = find_eviction_policy(name);
  if (!info) throw PolicyError("unknown eviction policy '" + std::string(name) + "' (known: " + known_policies() + ")");
  return *info;
}

const PolicyParamInfo& known_param(const PolicyInfo& info, std::string_view key) {
  for (const auto& p : info.params)
    if (p.name == key) return p;
  std::vector<std::string> valid;
  for (const auto& p : info.params) valid.push_back(p.name);
  throw PolicyError("eviction policy '" + info.name + "' has no parameter '" + std::string(key) + "' (" +
                    (valid.empty() ? std::string("it takes none") : "its parameters: " + names(valid)) + ")");
}

void check_value(const PolicyInfo& info, const PolicyParamInfo& param, double v) {
  const std::string where = "eviction policy '" + info.name + "': parameter '" + param.name + "'";
  if (!std::isfinite(v)) throw PolicyError(where + " must be a finite number");
  if (param.integer && v != std::floor(v)) throw PolicyError(where + " must be a whole number, got " + format_param(v));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void add_param(PolicySpec& spec, const PolicyInfo& info, std::string_view part) {
  part = trim(part);
  const std::string where = "eviction policy '" + spec.name + "'";
  if (part.empty()) throw PolicyError(where + ": an empty parameter (write key=value, separated by commas)");
  const size_t eq = part.find('=');
  if (eq == std::string_view::npos)
    throw PolicyError(where + ": parameter '" + std::string(part) + "' has no value (write " + std::string(part) + "=VALUE)");
  const std::string_view key = trim(part.substr(0, eq)), text = trim(part.substr(eq + 1));
  if (key.empty()) throw PolicyError(where + ": '" + std::string(part) + "' names no parameter");
  const PolicyParamInfo& param = known_param(info, key);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    throw PolicyError(where + ": parameter '" + std::string(key) + "': '" + std::string(text) + "' is not a number");
  check_value(info, param, v);
  if (!spec.params.emplace(std::string(key), v).second)
    throw PolicyError(where + ": parameter '" + std::string(key) + "' is given twice");
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) out.push_back(s.substr(start, i - start)), start = i + 1;
  return out;
}

}  // namespace

const std::vector<PolicyInfo>& eviction_policies() {
  static const std::vector<PolicyInfo> catalog = build_catalog();
  return catalog;
}

const PolicyInfo* find_eviction_policy(std::string_view name) {
  for (const auto& p : eviction_policies())
    if (p.name == name) return &p;
  return nullptr;
}

PolicySpec parse_policy_spec(std::string_view text) {
  text = trim(text);
  const size_t colon = text.find(':');
  PolicySpec spec{std::string(trim(text.substr(0, colon))), {}};
  const PolicyInfo& info = known(spec.name);
  if (colon == std::string_view::npos) return spec;
  const std::string_view rest = text.substr(colon + 1);
  if (trim(rest).empty()) throw PolicyError("eviction policy '" + spec.name + "': nothing after ':' (write name:key=value,...)");
  for (std::string_view part : split(rest, ',')) add_param(spec, info, part);
  return spec;
}

std::vector<PolicySpec> parse_policy_list(std::string_view text) {
  std::vector<std::string> specs;
  for (std::string_view part : split(text, ',')) {
    const std::string_view t = trim(part);
    const bool more_params = t.find('=') != std::string_view::npos && t.find(':') == std::string_view::npos;
    if (more_params && !specs.empty()) specs.back().append(",").append(t);
    else if (more_params) throw PolicyError("'" + std::string(t) + "' is a parameter with no policy before it");
    else if (t.empty()) throw PolicyError("an empty policy in the list '" + std::string(text) + "'");
    else specs.emplace_back(t);
  }
  std::vector<PolicySpec> out;
  for (const auto& s : specs) out.push_back(parse_policy_spec(s));
  return out;
}

std::string to_string(const PolicySpec& spec) {
  std::string out = spec.name;
  char sep = ':';
  for (const auto& [k, v] : spec.params) out += sep + k + "=" + format_param(v), sep = ',';
  return out;
}

PolicyParams resolve_params(const PolicySpec& spec) {
  const PolicyInfo& info = known(spec.name);
  PolicyParams out;
  for (const auto& p : info.params) out[p.name] = p.default_value;
  for (const auto& [k, v] : spec.params) {
    check_value(info, known_param(info, k), v);
    out[k] = v;
  }
  return out;
}

std::unique_ptr<EvictionPolicy> make_eviction_policy(const PolicySpec& spec) {
  const PolicyInfo& info = known(spec.name);
  if (!info.online)
    throw PolicyError("eviction policy '" + info.name +
                      "' is the offline bound: it needs every block's next use, which only `kvgate sim` knows");
  const PolicyParams p = resolve_params(spec);
  if (info.name == "lru") return make_lru_policy();
  if (info.name == "s3fifo")
    return make_s3fifo_policy(s3fifo_params_of(p));
  if (info.name == "cost")
    return make_cost_aware_policy({p.at("depth_weight"), p.at("restore_host"), p.at("restore_disk"),
                                   static_cast<int>(p.at("last_tier")), static_cast<int>(p.at("max_hits"))});
  if (info.name == "reuse")
    return make_reuse_policy({p.at("ghost"), p.at("base"), p.at("growth"), p.at("period"), p.at("halflife")});
  if (info.name == "convo")
    return make_convo_policy(s3fifo_params_of(p));
  if (info.name == "fair") {
    const double base = p.at("base");
    check_param(base == 0 || base == 1 || base == 2, "fair", "base", "0 (lru), 1 (s3fifo) or 2 (cost)", base);
    const PolicySpec inner{base == 0 ? "lru" : base == 1 ? "s3fifo" : "cost", {}};
    return make_tenant_fair_policy([inner] { return make_eviction_policy(inner); }, p);
  }
  throw PolicyError("eviction policy '" + info.name + "' has no factory");  // a catalog entry without one: a bug
}

std::string describe_eviction_policies() {
  std::string out;
  for (const auto& p : eviction_policies()) {
    out += "  " + p.name + ": " + p.description + "\n";
    for (const auto& param : p.params)
      out += "      " + param.name + "=" + format_param(param.default_value) + "  " + param.description + "\n";
  }
  return out;
}

}  // namespace kvgate::policies
