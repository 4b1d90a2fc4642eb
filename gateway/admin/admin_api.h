// AdminApi: the /admin/ routes, which the admin CLI calls. Only the admin
// token opens them (admin_token.h); a tenant's API key is refused with 403
// like any other wrong credential, and a missing one with 401.
//
//   GET    /admin/tenants                      every tenant (no secrets)
//   POST   /admin/tenants                      {id, name?, org_id?, share_org_scope?, plan_id?, quotas?} -> 201
//   PATCH  /admin/tenants/{id}                 {name?, status?, plan_id?, quotas?}
//   GET    /admin/tenants/{id}/keys            the tenant's keys (no digests)
//   POST   /admin/tenants/{id}/keys            {label?} -> 201 {key_id, api_key}: the key, shown once
//   DELETE /admin/tenants/{id}/keys/{key_id}   revoke, effective at once
//   GET    /admin/plans                        price plans
//   PUT    /admin/plans/{id}                   {fresh_input_per_mtok, output_per_mtok, cached_input_per_mtok?, cache_write_per_mtok?}
//   GET    /admin/requests/{request_id}        the request's ledger record (its x-request-id)
//   GET    /admin/cache                        the KV pool's blocks, per tenant hit counters, requests in flight
//   POST   /admin/tenants/{id}/cache/evict     {pins?} drop the tenant's unreferenced cached blocks in every tier (pins: and its pins)
//   POST   /admin/tenants/{id}/cache/pins      {prompt, ttl_s} pin a prefix for the tenant (run once, billed as a cache write)
//   GET    /admin/policy                       each tier's eviction policy and parameters, and every policy there is
//   PUT    /admin/policy/{tier}                {policy, params?} switch the tier's (device, host, disk) policy live, losing nothing cached
//   GET    /admin/cache/tiers                  each KV tier's capacity, occupancy and counters (faults, refusals, persisted)
//   POST   /admin/cache/purge                  {all?} delete the disk tier's entries of another model or KV layout (all: every entry)
//
// The cache and policy routes are in admin_cache_routes.cpp.
//
// Everything here waits on RocksDB or on the engine loop, so it runs on the
// BlockingPool's threads, never on the I/O thread that received it.
#pragma once

#include <string_view>
#include <vector>

#include "engine/sched/engine.h"
#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/kv_tiers.h"
#include "gateway/serving/pipeline.h"
#include "tenancy/tenancy.h"

namespace kvgate::admin {

class AdminApi {
 public:
  // `engine` is null on a route front: the tenancy routes are its own, the
  // cache and policy routes belong to each replica and answer 404 saying so.
  AdminApi(Engine* engine, tenancy::Tenancy& tenancy, serving::BlockingPool& work, serving::AdminToken token, serving::Pipeline& pipeline,
           const Tokenizer& tokenizer, std::string model, const serving::KvTiers& tiers)
      : engine_(engine), tenancy_(tenancy), work_(work), token_(std::move(token)), pipeline_(pipeline),
        tokenizer_(tokenizer), model_(std::move(model)), tiers_(tiers) {}

  // Any thread; answers later, from a work thread.
  void operator()(const server::HttpRequest& req, server::Reply reply);

 private:
  void handle(const server::HttpRequest& req, server::Reply& reply);
  // The cache and policy routes; false when `path` is none of them.
  bool handle_cache(const std::vector<std::string_view>& path, const server::HttpRequest& req, server::Reply& reply);

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
