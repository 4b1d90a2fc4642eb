// keys list TENANT | create TENANT | revoke TENANT KEY_ID | rotate TENANT KEY_ID
#include <iostream>
#include <memory>

#include <boost/json.hpp>

#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

std::string keys_path(const std::string& tenant) { return "/admin/tenants/" + path_segment(tenant) + "/keys"; }

struct KeyArgs {
  std::string tenant, key_id, label;
};

// A new key is shown this once: on stdout, with a reminder on stderr so a
// redirected stdout still gets it alone.
void print_new_key(const Context& ctx, const json::value& v, const char* what) {
  if (ctx.json()) return print_json(std::cout, v);
  const json::object& o = v.as_object();
  Fields f = {{"key_id", cell(o, "key_id")}, {"api_key", cell(o, "api_key")}};
  if (o.contains("replaces")) f.emplace_back("replaces", cell(o, "replaces"));
  print_fields(std::cout, f);
  std::cerr << "kvgatectl: " << what << ": the api_key is shown this once; the server keeps only its digest\n";
}

}  // namespace

void add_keys(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("keys", "list, create, revoke and rotate a tenant's API keys");
  g->require_subcommand(1);

  CLI::App* list = g->add_subcommand("list", "list a tenant's keys (ids and labels, never the keys)");
  auto l = std::make_shared<KeyArgs>();
  list->add_option("tenant", l->tenant, "tenant id")->required();
  list->callback([&ctx, l] {
    const json::value v = ctx.admin().get(keys_path(l->tenant));
    if (ctx.json()) return print_json(std::cout, v);
    Table t({"KEY_ID", "LABEL", "CREATED", "ACTIVE", "REPLACED_BY"});
    for (const json::value& e : array_at(v.as_object(), "data")) {
      const json::object& o = e.as_object();
      t.add({cell(o, "key_id"), cell(o, "label"), utc_from_ns(integer(o, "created_ns")), cell(o, "active"),
             cell(o, "replaced_by")});
    }
    t.print(std::cout);
  });

  CLI::App* create = g->add_subcommand("create", "issue a new API key (kvg-...) for a tenant");
  auto c = std::make_shared<KeyArgs>();
  create->add_option("tenant", c->tenant, "tenant id")->required();
  create->add_option("--label", c->label, "a note to tell keys apart");
  create->callback([&ctx, c] {
    json::object body;
    if (!c->label.empty()) body["label"] = c->label;
    print_new_key(ctx, ctx.admin().post(keys_path(c->tenant), body), "keys create");
  });

  CLI::App* revoke = g->add_subcommand("revoke", "revoke a key: the server refuses it (401) from now on");
  auto r = std::make_shared<KeyArgs>();
  revoke->add_option("tenant", r->tenant, "tenant id")->required();
  revoke->add_option("key_id", r->key_id, "key id (keys list shows them)")->required();
  revoke->callback([&ctx, r] {
    const json::value v = ctx.admin().del(keys_path(r->tenant) + "/" + path_segment(r->key_id));
    if (ctx.json()) return print_json(std::cout, v);
    std::cout << "revoked key " << r->key_id << " of tenant " << r->tenant << '\n';
  });

  CLI::App* rotate = g->add_subcommand(
      "rotate", "replace a key by a new one: the old key is refused from now on, the new one works at once");
  auto o = std::make_shared<KeyArgs>();
  rotate->add_option("tenant", o->tenant, "tenant id")->required();
  rotate->add_option("key_id", o->key_id, "id of the key to replace")->required();
  rotate->callback([&ctx, o] {
    print_new_key(ctx,
                  ctx.admin().post(keys_path(o->tenant) + "/" + path_segment(o->key_id) + "/rotate", json::object{}),
                  "keys rotate");
  });
}

}  // namespace kvgatectl
