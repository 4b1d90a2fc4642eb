// Runs once, at start-up, before the server accepts connections.
#include "gateway/serving/bootstrap.h"

#include "gateway/serving/admin_token.h"

namespace kvgate::serving {

bool secrets_pending(tenancy::Tenancy& t, const std::string& admin_token_file) {
  return t.tenants().list().empty() || !AdminToken::load(admin_token_file);
}

FirstStartSecrets bootstrap(tenancy::Tenancy& t, const std::string& admin_token_file) {
  FirstStartSecrets out;
  if (t.tenants().list().empty()) {
    // $0.15 per million fresh prompt tokens, cached at 10% of that, $0.60 per
    // million output tokens: prices in micro-dollars per million tokens.
    if (!t.tenants().find_plan(kDemoPlan))
      t.tenants().put_plan(tenancy::PricePlan::with_default_cached(kDemoPlan, 150'000, 600'000));
    tenancy::NewTenant demo;
    demo.id = kDemoTenant;
    demo.name = "Demo tenant";
    demo.plan_id = kDemoPlan;
    demo.quotas.requests_per_minute = 600;
    demo.quotas.tokens_per_minute = 1'000'000;
    demo.quotas.max_concurrent_requests = 64;
    t.tenants().create(demo);
    out.demo_key = t.keys().create(kDemoTenant, "first start").plaintext;
  }
  if (!AdminToken::load(admin_token_file)) out.admin_token = AdminToken::create(admin_token_file).second;
  return out;
}

}  // namespace kvgate::serving
