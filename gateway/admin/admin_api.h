// AdminApi: the /admin/ routes, which the admin CLI calls. Only the admin
// token opens them (admin_token.h); a tenant's API key is refused with 403
// like any other wrong credential, and a missing one with 401.
//
//   GET    /admin/tenants                      every tenant (no secrets)
//   POST   /admin/tenants                      {id, name?, org_id?, share_org_scope?, plan_id?, quotas?} -> 201
//   GET    /admin/tenants/{id}                 one tenant
//   PATCH  /admin/tenants/{id}                 {name?, status?, plan_id?, quotas?}
//   GET    /admin/tenants/{id}/keys            the tenant's keys (no digests)
//   POST   /admin/tenants/{id}/keys            {label?} -> 201 {key_id, api_key}: the key, shown once
//   DELETE /admin/tenants/{id}/keys/{key_id}   revoke, effective at once
//   POST   /admin/tenants/{id}/keys/{key_id}/rotate  -> 201 a new key replacing it, shown once
//   GET    /admin/usage?tenant=&from=&to=&format=    a tenant's usage by day (json or csv)
//   GET    /admin/plans                        price plans
//   PUT    /admin/plans/{id}                   {fresh_input_per_mtok, output_per_mtok, cached_input_per_mtok?, cache_write_per_mtok?, cache_write_5m_per_mtok?, cache_write_1h_per_mtok?}
//   GET    /admin/requests/{request_id}        the request's ledger record (its x-request-id)
//   POST   /admin/backup                       {dir} -> 201 a checkpoint of the tenancy store in dir (new, absolute, on this machine)
//   GET    /admin/cache                        the KV pool's blocks, per tenant hit counters, requests in flight
//   POST   /admin/tenants/{id}/cache/evict     {pins?} drop the tenant's unreferenced cached blocks in every tier (pins: and its pins)
//   POST   /admin/tenants/{id}/cache/pins      {prompt, ttl_s} pin a prefix for the tenant (run once, billed as a cache write)
//   GET    /admin/policy                       each tier's eviction policy and parameters, and every policy there is
//   PUT    /admin/policy/{tier}                {policy, params?} switch the tier's (device, host, disk) policy live, losing nothing cached
//   GET    /admin/cache/tiers                  each KV tier's capacity, occupancy and counters (faults, refusals, persisted)
//   POST   /admin/cache/purge                  {all?} delete the disk tier's entries of another model or KV layout (all: every entry)
//
// The routes are one table (kRoutes, admin_api.cpp), each a method; the
// cache and policy routes are in admin_cache_routes.cpp.
//
// Everything here waits on RocksDB or on the engine loop, so it runs on the
// admin BlockingPool's threads, never on the I/O thread that received it;
// the token is checked before anything is queued there, and a full queue
// answers 503 (blocking_pool.h).
#pragma once

#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "engine/sched/engine.h"
#include "gateway/server/http_request.h"
#include "gateway/server/path_pattern.h"
#include "gateway/server/reply.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/kv_tiers.h"
#include "gateway/serving/pipeline.h"
#include "tenancy/tenancy.h"

namespace kvgate::admin {

class AdminApi {
 public:
  // `engine` is null on a route front: the tenancy routes are its own, and
  // so are a tenant's pins (a request through the front's pipeline, placed
  // on a replica like any other); the other cache and policy routes belong
  // to each replica and answer 404 saying so.
  AdminApi(Engine* engine, tenancy::Tenancy& tenancy, serving::BlockingPool& work, serving::AdminToken token, serving::Pipeline& pipeline,
           const Tokenizer& tokenizer, std::string model, const serving::KvTiers& tiers)
      : engine_(engine), tenancy_(tenancy), work_(work), token_(std::move(token)), pipeline_(pipeline),
        tokenizer_(tokenizer), model_(std::move(model)), tiers_(tiers) {}

  // Any thread; answers later, from a work thread.
  void operator()(const server::HttpRequest& req, server::Reply reply);

 private:
  // One request as a route sees it: the {} segments of its pattern in order.
  struct Call {
    const server::HttpRequest& req;
    server::Reply& reply;
    std::vector<std::string_view> params;
  };
  struct Route {
    std::string_view method;
    server::PathPattern pattern;  // split once, with the table
    void (AdminApi::*answer)(const Call&);
    bool engine_only;  // the cache and policy routes: each replica's, not a route front's
  };
  static const Route kRoutes[];
  // The request's JSON object; {} for an empty body.
  static boost::json::object body_of(const server::HttpRequest& req);

  void handle(const server::HttpRequest& req, server::Reply& reply);

  void list_tenants(const Call& c);
  void create_tenant(const Call& c);
  void get_tenant(const Call& c);
  void update_tenant(const Call& c);
  void list_keys(const Call& c);
  void create_key(const Call& c);
  void revoke_key(const Call& c);
  void rotate_key(const Call& c);
  void usage(const Call& c);
  void list_plans(const Call& c);
  void put_plan(const Call& c);
  void get_request(const Call& c);
  void backup(const Call& c);
  // admin_cache_routes.cpp
  void cache_stats(const Call& c);
  void get_policy(const Call& c);
  void set_policy(const Call& c);
  void tier_stats(const Call& c);
  void purge(const Call& c);
  void evict_tenant(const Call& c);
  void pin(const Call& c);

  Engine* const engine_;
  tenancy::Tenancy& tenancy_;
  serving::BlockingPool& work_;
  const serving::AdminToken token_;
  serving::Pipeline& pipeline_;
  const Tokenizer& tokenizer_;
  const std::string model_;  // the served model's id: what an operator's pin is recorded under
  const serving::KvTiers& tiers_;     // the host and disk tiers (thread-safe; none may be open)
};

}  // namespace kvgate::admin
