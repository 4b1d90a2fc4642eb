// cache stats [--tenant ID] [--tier T] | tiers | purge [--all] | evict TENANT | flush TENANT | pin TENANT ...
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

std::string cache_path(const std::string& tenant, const char* what) {
  return "/admin/tenants/" + path_segment(tenant) + "/cache/" + what;
}

std::string percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << 100.0 * static_cast<double>(part) / static_cast<double>(whole) << '%';
  return s.str();
}

// "1 2 3" or "1,2,3" -> [1,2,3].
json::array token_ids(const std::string& text) {
  json::array ids;
  std::string t = text;
  for (char& c : t)
    if (c == ',') c = ' ';
  std::istringstream in(t);
  std::string w;
  while (in >> w) {
    bool digits = !w.empty() && w.size() <= 10;
    for (char c : w) digits = digits && c >= '0' && c <= '9';
    if (!digits) throw usage_error("--tokens: '" + w + "' is not a token id");
    ids.push_back(static_cast<int64_t>(std::stoll(w)));
  }
  if (ids.empty()) throw usage_error("--tokens: no token ids");
  return ids;
}

// The device pool's row of GET /admin/cache (the tiers below it have
// their own route: `cache tiers`).
json::array tiers_of(const json::object& o) {
  if (const json::array& t = array_at(o, "tiers"); !t.empty()) return t;
  json::object device{{"tier", "device"}};
  for (const char* k : {"blocks_total", "blocks_in_use", "blocks_cached_free", "blocks_free", "blocks_pinned"})
    if (const json::value* v = o.if_contains(k)) device[k] = *v;
  return json::array{device};
}

// The tiers below the device pool (GET /admin/cache/tiers): capacity, use,
// traffic and the records found corrupt, per tier.
void print_lower_tiers(const json::array& tiers) {
  Table t({"TIER", "BLOCKS", "USED_BYTES", "CAPACITY_BYTES", "IN_USE", "STORED", "EVICTED", "REFUSED", "HITS",
           "MISSES", "FAULTS", "WRITE_ERRORS"});
  for (const json::value& e : tiers) {
    const json::object& r = e.as_object();
    int64_t faults = 0;
    if (const json::value* f = r.if_contains("faults"); f && f->is_object())
      for (const auto& m : f->as_object()) faults += m.value().is_int64() ? m.value().as_int64() : 0;
    t.add({cell(r, "tier"), cell(r, "blocks"), cell(r, "used_bytes"), cell(r, "capacity_bytes"),
           cell(r, "blocks_in_use"), cell(r, "stored"), cell(r, "evicted"), cell(r, "refused"), cell(r, "hits"),
           cell(r, "misses"), std::to_string(faults), cell(r, "write_errors")});
  }
  t.print(std::cout);
}

void add_tiers(CLI::App& g, Context& ctx) {
  CLI::App* c = g.add_subcommand("tiers", "the KV tiers below the device pool: host memory, disk, Redis");
  c->callback([&ctx] {
    const json::value v = ctx.admin().get("/admin/cache/tiers");
    if (ctx.json()) return print_json(std::cout, v);
    print_lower_tiers(array_at(v.as_object(), "tiers"));
  });
}

void add_stats(CLI::App& g, Context& ctx) {
  struct Args {
    std::string tenant, tier;
  };
  auto a = std::make_shared<Args>();
  CLI::App* c = g.add_subcommand("stats", "the KV cache: blocks per tier, and per tenant hits, blocks and pins");
  c->add_option("--tenant", a->tenant, "only this tenant's row");
  c->add_option("--tier", a->tier, "only this tier's row (device; host and disk when the server has them)");
  c->callback([&ctx, a] {
    json::value v = ctx.admin().get("/admin/cache");
    json::object& o = v.as_object();
    json::array tiers = tiers_of(o);
    // Filters apply to the JSON too, so a script sees what a person sees.
    if (!a->tenant.empty()) {
      json::array kept;
      for (const json::value& e : array_at(o, "tenants"))
        if (cell(e.as_object(), "tenant") == a->tenant) kept.push_back(e);
      if (kept.empty())
        throw refused("tenant '" + a->tenant + "' has no cache counters (unknown, or it never sent a request)");
      o["tenants"] = std::move(kept);
    }
    if (!a->tier.empty()) {
      // The device's row is GET /admin/cache's; host, disk and Redis rows
      // are GET /admin/cache/tiers', printed as `cache tiers` prints them.
      json::array kept;
      std::string names;
      for (const json::value& e : tiers) {
        const std::string name = cell(e.as_object(), "tier");
        names += (names.empty() ? "" : ", ") + name;
        if (name == a->tier) kept.push_back(e);
      }
      if (kept.empty()) {
        const json::value lower = ctx.admin().get("/admin/cache/tiers");
        json::array rows;
        for (const json::value& e : array_at(lower.as_object(), "tiers")) {
          const std::string name = cell(e.as_object(), "tier");
          names += ", " + name;
          if (name == a->tier) rows.push_back(e);
        }
        if (rows.empty()) throw refused("the server has no cache tier '" + a->tier + "' (it has: " + names + ")");
        if (ctx.json()) return print_json(std::cout, json::value{{"tiers", rows}});
        return print_lower_tiers(rows);
      }
      tiers = std::move(kept);
      if (o.contains("tiers")) o["tiers"] = tiers;
    }
    if (ctx.json()) return print_json(std::cout, v);

    Table t({"TIER", "BLOCKS", "IN_USE", "CACHED", "FREE", "PINNED"});
    for (const json::value& e : tiers) {
      const json::object& r = e.as_object();
      t.add({cell(r, "tier"), cell(r, "blocks_total"), cell(r, "blocks_in_use"), cell(r, "blocks_cached_free"),
             cell(r, "blocks_free"), cell(r, "blocks_pinned")});
    }
    t.print(std::cout);
    std::cout << "requests in flight: " << cell(o, "requests_in_flight") << "\n\n";

    Table u({"TENANT", "HIT_RATE", "QUERY_TOKENS", "HIT_TOKENS", "IN_USE", "CACHED", "EVICTABLE", "PINNED", "STORED",
             "EVICTIONS"});
    for (const json::value& e : array_at(o, "tenants")) {
      const json::object& r = e.as_object();
      u.add({r.contains("tenant") ? cell(r, "tenant") : cell(r, "label"),
             percent(integer(r, "hit_tokens"), integer(r, "query_tokens")), cell(r, "query_tokens"),
             cell(r, "hit_tokens"), cell(r, "blocks_in_use"), cell(r, "blocks_cached"), cell(r, "blocks_cached_free"),
             cell(r, "blocks_pinned"), cell(r, "blocks_stored"), cell(r, "evictions")});
    }
    u.print(std::cout);
  });
}

// POST /admin/cache/purge: the disk tier's entries of another model, block
// size or element type, or every entry with --all.
void add_purge(CLI::App& g, Context& ctx) {
  auto all = std::make_shared<bool>(false);
  CLI::App* c = g.add_subcommand(
      "purge", "delete the disk tier's entries of another model, block size or KV element type (--all: every entry)");
  c->add_flag("--all", *all, "every entry, this model's too: the next requests miss on disk");
  c->callback([&ctx, all] {
    const json::value v = ctx.admin().post("/admin/cache/purge", json::object{{"all", *all}});
    if (ctx.json()) return print_json(std::cout, v);
    print_fields(std::cout, flatten(v.as_object()));
  });
}

void add_evict(CLI::App& g, Context& ctx, const char* name, bool pins, const char* help) {
  auto tenant = std::make_shared<std::string>();
  CLI::App* c = g.add_subcommand(name, help);
  c->add_option("tenant", *tenant, "tenant id")->required();
  c->callback([&ctx, tenant, pins] {
    const json::value v = ctx.admin().post(cache_path(*tenant, "evict"), json::object{{"pins", pins}});
    if (ctx.json()) return print_json(std::cout, v);
    print_fields(std::cout, flatten(v.as_object()));
  });
}

void add_pin(CLI::App& g, Context& ctx) {
  struct Args {
    std::string tenant, prompt, prompt_file, tokens;
    int64_t ttl_s = 300;
  };
  auto a = std::make_shared<Args>();
  CLI::App* c = g.add_subcommand(
      "pin", "prefill a prompt prefix into the tenant's cache and keep it there (not evicted) for the TTL; the server "
      "runs it once as a request of the tenant's, billed as a cache write");
  c->add_option("tenant", a->tenant, "tenant id")->required();
  auto* text = c->add_option("--prompt", a->prompt, "the prefix as text (tokenized as /v1/completions does)");
  auto* file = c->add_option("--prompt-file", a->prompt_file, "the prefix as text, read from a file")->type_name("FILE");
  auto* ids = c->add_option("--tokens", a->tokens, "the prefix as token ids, \"1,2,3\" or \"1 2 3\"")->type_name("IDS");
  text->excludes(file)->excludes(ids);
  file->excludes(ids);
  c->add_option("--ttl", a->ttl_s, "seconds to keep it pinned (the server takes 1 to 86400)")
      ->type_name("SECONDS")
      ->capture_default_str();
  c->callback([&ctx, a] {
    json::object body{{"ttl_s", a->ttl_s}};
    if (!a->tokens.empty()) {
      body["prompt"] = token_ids(a->tokens);
    } else if (!a->prompt_file.empty()) {
      std::ifstream in(a->prompt_file, std::ios::binary);
      if (!in) throw usage_error("--prompt-file " + a->prompt_file + ": cannot read it");
      std::ostringstream s;
      s << in.rdbuf();
      body["prompt"] = s.str();
    } else if (!a->prompt.empty()) {
      body["prompt"] = a->prompt;
    } else {
      throw usage_error("cache pin: give the prefix with --prompt, --prompt-file or --tokens");
    }
    const json::value v = ctx.admin().post(cache_path(a->tenant, "pins"), body);
    if (ctx.json()) return print_json(std::cout, v);
    print_fields(std::cout, flatten(v.as_object()));
  });
}

}  // namespace

void add_cache(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("cache", "KV cache statistics, the tiers below the device, a purge of the disk "
                                            "tier; evict or flush a tenant's blocks; pin a prefix");
  g->require_subcommand(1);
  add_stats(*g, ctx);
  add_tiers(*g, ctx);
  add_purge(*g, ctx);
  add_evict(*g, ctx, "evict", false,
            "drop a tenant's cached blocks no request is using; its pinned prefixes stay");
  add_evict(*g, ctx, "flush", true,
            "drop a tenant's cached blocks no request is using and its pins: its next request misses");
  add_pin(*g, ctx);
}

}  // namespace kvgatectl
