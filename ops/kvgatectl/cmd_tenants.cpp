// tenants list | show ID | create ID | update ID | disable ID | enable ID
#include <iostream>
#include <memory>

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"
#include "ops/kvgatectl/commands.h"
#include "ops/kvgatectl/output.h"
#include "ops/kvgatectl/quota_flags.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

std::string tenant_path(const std::string& id) { return "/admin/tenants/" + path_segment(id); }

void print_tenant(const Context& ctx, const json::value& t) {
  if (ctx.json()) return print_json(std::cout, t);
  print_fields(std::cout, flatten(t.as_object()));
}

void add_list(CLI::App& g, Context& ctx) {
  CLI::App* c = g.add_subcommand("list", "list every tenant");
  c->callback([&ctx] {
    const json::value v = ctx.admin().get("/admin/tenants");
    if (ctx.json()) return print_json(std::cout, v);
    Table t({"ID", "NAME", "ORG", "STATUS", "PLAN", "RPM", "TPM", "CONCURRENT"});
    for (const json::value& e : array_at(v.as_object(), "data")) {
      const json::object& o = e.as_object();
      const json::object& q = object_at(o, "quotas");
      t.add({cell(o, "id"), cell(o, "name"), cell(o, "org_id"), cell(o, "status"), cell(o, "plan_id"),
             limit_text(integer(q, "requests_per_minute")), limit_text(integer(q, "tokens_per_minute")),
             limit_text(integer(q, "max_concurrent_requests"))});
    }
    t.print(std::cout);
  });
}

void add_show(CLI::App& g, Context& ctx) {
  CLI::App* c = g.add_subcommand("show", "show one tenant: status, plan, quotas");
  auto id = std::make_shared<std::string>();
  c->add_option("id", *id, "tenant id")->required();
  c->callback([&ctx, id] { print_tenant(ctx, ctx.admin().get(tenant_path(*id))); });
}

void add_create(CLI::App& g, Context& ctx) {
  struct Opts {
    std::string id, name, org, plan;
    bool share_org_scope = false;
    QuotaValues quotas;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* c = g.add_subcommand("create", "create a tenant (then give it a key: keys create ID)");
  c->add_option("id", o->id, "tenant id: 1-64 characters of [A-Za-z0-9_.-]")->required();
  c->add_option("--name", o->name, "display name (default: the id)");
  c->add_option("--org", o->org, "organization id");
  c->add_flag("--share-org-scope", o->share_org_scope,
              "share the prefix cache with the org's other tenants that share it (needs --org)");
  c->add_option("--plan", o->plan, "price plan id (default: the server's, demo)");
  o->quotas.add_to(*c);
  c->callback([&ctx, o] {
    json::object body{{"id", o->id}};
    if (!o->name.empty()) body["name"] = o->name;
    if (!o->org.empty()) body["org_id"] = o->org;
    if (o->share_org_scope) body["share_org_scope"] = true;
    if (!o->plan.empty()) body["plan_id"] = o->plan;
    if (o->quotas.any()) body["quotas"] = o->quotas.json();
    print_tenant(ctx, ctx.admin().post("/admin/tenants", body));
  });
}

void add_update(CLI::App& g, Context& ctx) {
  struct Opts {
    std::string id;
    std::optional<std::string> name, plan;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* c = g.add_subcommand("update", "change a tenant's name or price plan");
  c->add_option("id", o->id, "tenant id")->required();
  c->add_option("--name", o->name, "new display name");
  c->add_option("--plan", o->plan, "new price plan id (prices show lists them)");
  c->callback([&ctx, o] {
    json::object body;
    if (o->name) body["name"] = *o->name;
    if (o->plan) body["plan_id"] = *o->plan;
    if (body.empty()) throw usage_error("tenants update: give --name or --plan (or both)");
    print_tenant(ctx, ctx.admin().patch(tenant_path(o->id), body));
  });
}

void add_status(CLI::App& g, Context& ctx, const char* name, const char* status, const char* help) {
  CLI::App* c = g.add_subcommand(name, help);
  auto id = std::make_shared<std::string>();
  c->add_option("id", *id, "tenant id")->required();
  c->callback([&ctx, id, status] {
    const json::value v = ctx.admin().patch(tenant_path(*id), json::object{{"status", status}});
    if (ctx.json()) return print_json(std::cout, v);
    std::cout << "tenant " << *id << ": " << cell(v.as_object(), "status") << '\n';
  });
}

}  // namespace

void add_tenants(CLI::App& app, Context& ctx) {
  CLI::App* g = app.add_subcommand("tenants", "list, show, create, update, disable and enable tenants");
  g->require_subcommand(1);
  add_list(*g, ctx);
  add_show(*g, ctx);
  add_create(*g, ctx);
  add_update(*g, ctx);
  add_status(*g, ctx, "disable", "suspended",
             "suspend a tenant: its keys are refused with 401 until it is enabled; its data is kept");
  add_status(*g, ctx, "enable", "active", "make a suspended tenant active again");
}

}  // namespace kvgatectl
