// One `kvgate bench-serve` run against a live server, end to end:
//
//   1. the tenants: the given API keys, one tenant each; or, with the admin
//      token, `tenants` tenants made through POST /admin/tenants (ids
//      PREFIX-0, PREFIX-1, ...; no quotas, so the load generator measures
//      the engine, not the rate limits; a tenant that exists is reused as
//      it is) and a key for each (POST /admin/tenants/{id}/keys);
//   2. the model: as given, else the first of GET /v1/models;
//   3. with the admin token, GET /metrics before and after the run: the
//      deltas of the cost and prefix-cache counters over the run's tenants
//      (all tenants when keys were given) are the bill with and without
//      caching and the server's hit rate. Without /metrics (a server that
//      answers 404, or no admin token) the bill is the usage chunks' own;
//   4. the run (load_run.h) and the report (bench_report.h).
//
// Threads: the calling thread runs everything.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "gateway/tools/loadgen/bench_report.h"
#include "gateway/client/https_target.h"
#include "gateway/tools/loadgen/load_run.h"
#include "gateway/tools/loadgen/workload.h"

namespace kvgate::loadgen {

struct SessionOptions {
  std::string url;
  client::TlsTrust tls;
  std::vector<std::string> api_keys;
  std::string admin_token;
  std::string tenant_prefix = "bench";
  std::string plan_id;  // for made tenants; empty: the server's default
  RunSettings run;      // model may be empty; api_keys are filled here
  ReportContext report;
};

// Throws kvgate::Error for what stops a run before it starts (no server,
// refused credentials, too few keys), naming it.
BenchReport run_bench_session(const Workload& w, SessionOptions o, std::FILE* log);

}  // namespace kvgate::loadgen
