#include "gateway/tools/sim/sim_report.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <boost/json.hpp>

#include "base/error.h"

namespace kvgate::sim {
namespace {

std::string grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fixed(double v, int places) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", places, v);
  return buf;
}

const ReplayResult* bound_of(const SimTable& t) {
  for (const auto& r : t.results)
    if (r.policy == "belady") return &r;
  return nullptr;
}

std::string tiers_title(const SimTable& t, int64_t distinct) {
  std::string out;
  for (const auto& tier : t.tiers) {
    if (!out.empty()) out += " + ";
    out += std::string(tier_name(tier.tier)) + " " + grouped(tier.blocks);
  }
  out += t.tiers.size() == 1 ? " blocks" : " blocks";
  if (t.tiers.size() == 1 && distinct > 0)
    out += " (" + fixed(100.0 * static_cast<double>(t.tiers[0].blocks) / static_cast<double>(distinct), 2) +
           "% of the distinct blocks)";
  return out;
}

double rate(int64_t part, int64_t whole) { return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0; }

std::string layout(const std::vector<TierSpec>& tiers, int64_t times) {
  std::string out;
  for (const auto& tier : tiers) out += (out.empty() ? "" : " + ") + std::string(tier_name(tier.tier)) + " " + grouped(tier.blocks * times);
  return out + " blocks";
}

// The routed result's share of one cache's token hit rate, in %.
double share(const ReplayResult& routed, const ReplayResult& one) {
  return one.token_rate() > 0 ? 100.0 * routed.token_rate() / one.token_rate() : 0;
}

void cluster_markdown(const ClusterTable& t, std::string& out) {
  const bool tiered = t.tiers.size() > 1;
  out += "\n### " + std::to_string(t.replicas) + " replicas x " + layout(t.tiers, 1) + " (" + t.one_cache.policy +
         "), one cache of " + layout(t.tiers, t.replicas) + "\n\n| router | token hit %";
  std::string rule = "|---|---:";
  if (tiered)
    for (const auto& tier : t.tiers) out += " | " + std::string(tier_name(tier.tier)) + " %", rule += "|---:";
  out += " | of one cache % | prefill-weighted hit % | load balance (max/mean requests) | route us/request | replay s |\n";
  out += rule + "|---:|---:|---:|---:|---:|\n";
  const auto row = [&](const std::string& name, const ReplayResult& r, const std::string& balance, const std::string& route_us) {
    out += "| " + name + " | " + fixed(r.token_rate(), 2);
    if (tiered)
      for (size_t i = 0; i < r.tiers.size(); ++i) out += " | " + fixed(r.tier_token_rate(i), 2);
    out += " | " + fixed(share(r, t.one_cache), 1) + " | " + fixed(r.prefill_rate(), 2) + " | " + balance + " | " + route_us +
           " | " + fixed(r.seconds, 3) + " |\n";
  };
  row("one cache (" + std::to_string(t.replicas) + "x the capacity)", t.one_cache, "-", "-");
  for (const ClusterResult& c : t.routed)
    row(c.router, c.total, fixed(c.balance(), 2),
        fixed(c.total.requests ? 1e6 * c.route_seconds / static_cast<double>(c.total.requests) : 0, 2));
}

boost::json::object result_json(const ReplayResult& r, const std::vector<TierSpec>& tiers) {
  boost::json::object per_tier;
  for (size_t i = 0; i < r.tiers.size(); ++i)
    per_tier[tier_name(tiers[i].tier)] = boost::json::object{{"hit_tokens", r.tiers[i].tokens},
                                                             {"hit_blocks", r.tiers[i].blocks},
                                                             {"token_hit_pct", r.tier_token_rate(i)}};
  return {{"requests", r.requests},
          {"tokens", r.tokens},
          {"hit_tokens", r.hit_tokens},
          {"blocks", r.blocks},
          {"hit_blocks", r.hit_blocks},
          {"token_hit_pct", r.token_rate()},
          {"block_hit_pct", r.block_rate()},
          {"prefill_weighted_hit_pct", r.prefill_rate()},
          {"tiers", per_tier},
          {"device_evictions", r.evictions},
          {"seconds", r.seconds}};
}

boost::json::object cluster_json(const ClusterTable& t) {
  boost::json::array tiers, rows;
  for (const auto& tier : t.tiers) tiers.push_back(boost::json::object{{"tier", tier_name(tier.tier)}, {"blocks", tier.blocks}});
  for (const ClusterResult& c : t.routed) {
    boost::json::object row = result_json(c.total, t.tiers);
    row["router"] = c.router;
    row["of_one_cache_pct"] = share(c.total, t.one_cache);
    row["load_balance"] = c.balance();
    row["requests_per_replica"] = boost::json::array(c.requests.begin(), c.requests.end());
    row["route_seconds"] = c.route_seconds;
    rows.push_back(std::move(row));
  }
  return {{"replicas", t.replicas},
          {"policy", t.one_cache.policy},
          {"tiers_per_replica", tiers},
          {"one_cache", result_json(t.one_cache, t.tiers)},
          {"results", rows}};
}

}  // namespace

int64_t parse_capacity(std::string_view text, int64_t distinct) {
  const std::string shown(text);
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    throw Error("capacity '" + shown + "' is not a block count or a percentage of the distinct blocks (e.g. 1828 or 1%)");
  if (percent) {
    if (v <= 0 || v > 100) throw Error("capacity '" + shown + "' must be a percentage in (0, 100]");
    const auto blocks = static_cast<int64_t>(std::llround(static_cast<double>(distinct) * v / 100.0));
    return std::max<int64_t>(blocks, 1);
  }
  if (v != std::floor(v) || v < 1 || v > 1e9) throw Error("capacity '" + shown + "' must be a whole number of blocks >= 1");
  return static_cast<int64_t>(v);
}

std::vector<TierSpec> parse_tiers(std::string_view text, int64_t distinct) {
  std::vector<TierSpec> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view part = text.substr(start, comma - start);
    start = comma + 1;
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos)
      throw Error("tier '" + std::string(part) + "' needs a capacity (write device:N,host:M,disk:K)");
    const std::string_view name = part.substr(0, colon);
    TierSpec t;
    if (name == "device") t.tier = policies::Tier::kDevice;
    else if (name == "host") t.tier = policies::Tier::kHost;
    else if (name == "disk") t.tier = policies::Tier::kDisk;
    else throw Error("unknown tier '" + std::string(name) + "' (tiers: device, host, disk)");
    t.blocks = parse_capacity(part.substr(colon + 1), distinct);
    if (out.empty() && t.tier != policies::Tier::kDevice) throw Error("tiers '" + std::string(text) + "' must start with device");
    if (!out.empty() && t.tier <= out.back().tier)
      throw Error("tiers '" + std::string(text) + "': device, then host, then disk, each at most once");
    out.push_back(t);
    if (comma == text.size()) break;
  }
  return out;
}

std::string format_markdown(const SimRun& run) {
  const TraceSummary& s = run.summary;
  std::string out = "kvgate sim: " + run.trace + "\n";
  out += grouped(s.requests) + " requests, " + grouped(s.block_refs) + " block references, " + grouped(s.distinct_blocks) +
         " distinct blocks of 512 tokens, " + grouped(s.prompt_tokens) + " prompt tokens\n";
  out += "unbounded cache: " + fixed(rate(s.unbounded_hit_tokens, s.prompt_tokens), 2) + "% of tokens, " +
         fixed(rate(s.unbounded_hit_blocks, s.block_refs), 2) + "% of blocks hit\n";
  if (run.repeat > 1)
    out += "replayed " + std::to_string(run.repeat) + " times back to back, each copy with its own hash ids (" +
           grouped(s.requests * run.repeat) + " requests)\n";
  for (const ClusterTable& t : run.clusters) cluster_markdown(t, out);
  for (const SimTable& t : run.tables) {
    const ReplayResult* bound = bound_of(t);
    const bool tiered = t.tiers.size() > 1;
    out += "\n### " + tiers_title(t, s.distinct_blocks) + "\n\n| policy | token hit %";
    std::string rule = "|---|---:";
    if (tiered)
      for (const auto& tier : t.tiers) out += " | " + std::string(tier_name(tier.tier)) + " %", rule += "|---:";
    out += " | block hit % | prefill-weighted hit % | gap to Belady (points) | replay s | requests/s |\n";
    out += rule + "|---:|---:|---:|---:|---:|\n";
    for (const ReplayResult& r : t.results) {
      const bool is_bound = &r == bound;
      out += "| " + (is_bound ? std::string("belady (offline bound)") : r.policy) + " | " + fixed(r.token_rate(), 2);
      if (tiered)
        for (size_t i = 0; i < r.tiers.size(); ++i) out += " | " + fixed(r.tier_token_rate(i), 2);
      out += " | " + fixed(r.block_rate(), 2) + " | " + fixed(r.prefill_rate(), 2) + " | " +
             (bound ? fixed(bound->token_rate() - r.token_rate(), 2) : std::string("-")) + " | " + fixed(r.seconds, 3) +
             " | " + grouped(r.seconds > 0 ? static_cast<int64_t>(static_cast<double>(r.requests) / r.seconds) : 0) + " |\n";
    }
  }
  return out;
}

boost::json::object to_json(const SimRun& run) {
  const TraceSummary& s = run.summary;
  boost::json::object trace{{"path", run.trace},
                            {"requests", s.requests},
                            {"block_refs", s.block_refs},
                            {"distinct_blocks", s.distinct_blocks},
                            {"prompt_tokens", s.prompt_tokens},
                            {"unbounded_token_hit_pct", rate(s.unbounded_hit_tokens, s.prompt_tokens)},
                            {"unbounded_block_hit_pct", rate(s.unbounded_hit_blocks, s.block_refs)}};
  boost::json::array tables;
  for (const SimTable& t : run.tables) {
    const ReplayResult* bound = bound_of(t);
    boost::json::array tiers, rows;
    for (const auto& tier : t.tiers) tiers.push_back(boost::json::object{{"tier", tier_name(tier.tier)}, {"blocks", tier.blocks}});
    for (const ReplayResult& r : t.results) {
      boost::json::object params;
      for (const auto& [k, v] : r.params) params[k] = v;
      boost::json::object row = result_json(r, t.tiers);
      row["policy"] = r.policy;
      row["params"] = std::move(params);
      row["offline_bound"] = &r == bound;
      row["gap_to_belady_points"] = bound ? boost::json::value(bound->token_rate() - r.token_rate()) : boost::json::value(nullptr);
      rows.push_back(std::move(row));
    }
    tables.push_back(boost::json::object{{"tiers", tiers}, {"results", rows}});
  }
  boost::json::object out{{"trace", trace}, {"repeat", run.repeat}, {"depth_weight", run.depth_weight}, {"tables", tables}};
  if (!run.clusters.empty()) {
    boost::json::array clusters;
    for (const ClusterTable& t : run.clusters) clusters.push_back(cluster_json(t));
    out["clusters"] = std::move(clusters);
  }
  return out;
}

}  // namespace kvgate::sim
