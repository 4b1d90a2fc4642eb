// Invariants, per tenant, under State::mu:
//  - in_flight == open_tickets.size(): a slot is taken by admit() and given
//    back by the one settle() or settle_pending() of that ticket (double
//    settles are refused);
//  - reserved_cost == sum of reserved_cost_micros over open tickets, plus
//    the cost of every PendingSpend not yet committed or cancelled;
//  - spent counts only settled requests whose cost was committed: settle()
//    commits at once, settle_pending() leaves it to the caller;
//  - admit() runs every check_* before charge() takes anything, so a
//    refusal leaves no trace, and a success charges all limits at once.
//    Because checks and charges happen under the same lock, concurrent
//    admissions can never jointly overshoot a limit.
// Thread-safety: map_mu_ guards only the map; each tenant's State has its own
// mutex, so tenants never contend with each other. States are never erased,
// so a State& stays valid once looked up. The fields' ABSL_GUARDED_BY and the
// helpers' ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) (quota.h) let clang's
// -Wthread-safety check this.
#include "tenancy/quota.h"

#include "tenancy/checked_math.h"
#include "tenancy/error.h"
#include "tenancy/utc_calendar.h"

namespace kvgate::tenancy {

namespace {

constexpr int64_t kSecondNs = 1'000'000'000;

uint64_t ceil_s(int64_t ns) {
  return ns <= 0 ? 0 : static_cast<uint64_t>(ns / kSecondNs + (ns % kSecondNs != 0));
}

Refusal refusal(Limit l, uint64_t limit, uint64_t remaining, uint64_t retry_s, uint64_t reset_s,
                bool never_fits, const std::string& tenant) {
  Refusal r{l, limit, remaining, retry_s, reset_s, never_fits, ""};
  r.message = std::string(limit_name(l)) + " limit of " + std::to_string(limit) +
              " reached for tenant '" + tenant + "' (remaining " + std::to_string(remaining) +
              (never_fits ? "; the request alone exceeds the limit)"
                          : ", retry in " + std::to_string(retry_s) + " s)");
  return r;
}

// The most an admitted request can cost: every prompt token fresh, and all
// of max_output_tokens produced. Unpriceable estimates reserve everything.
uint64_t worst_case_cost(const PricePlan& plan, const Estimate& e) {
  TokenUsage worst;
  worst.prompt_tokens = worst.fresh_prefill = e.prompt_tokens;
  worst.output_tokens = e.max_output_tokens;
  return try_cost_micros(plan, worst).value_or(kU64Max);
}

// A request must wait for every limit it breaks, so of several refusals the
// client hears the one that makes it wait longest, or that can never be met.
// On a tie the earlier check's refusal stays.
void keep_worst(std::optional<Refusal>* worst, std::optional<Refusal> r) {
  if (!r) return;
  const bool worse = !*worst || (r->never_fits && !(*worst)->never_fits) ||
                     (r->never_fits == (*worst)->never_fits &&
                      r->retry_after_s > (*worst)->retry_after_s);
  if (worse) *worst = std::move(r);
}

Error cost_overflow(const Ticket& t) {
  return Error(ErrorCode::kOverflow,
               "cost of a request under plan '" + t.plan.id + "' exceeds 2^64-1 micro-units");
}

void sync_bucket(std::optional<TokenBucket>& b, uint64_t limit, int64_t now) {
  if (limit == 0) {
    b.reset();
  } else if (!b) {
    b.emplace(limit, now);
  } else if (b->capacity() != limit) {
    b->set_capacity(limit, now);
  }
}

}  // namespace

const char* limit_name(Limit l) noexcept {
  switch (l) {
    case Limit::kRequestsPerMinute: return "requests";
    case Limit::kTokensPerMinute: return "tokens";
    case Limit::kConcurrentRequests: return "concurrent_requests";
    case Limit::kMonthlySpend: return "monthly_spend";
    case Limit::kKvBlocks: return "kv_blocks";
    case Limit::kPinnedBlocks: return "pinned_blocks";
    case Limit::kServerPinnedBlocks: return "server_pinned_blocks";
  }
  return "?";
}

Quotas::Quotas(const WallClock& clock, SpendSource spend) : clock_(clock), spend_(std::move(spend)) {}
Quotas::~Quotas() = default;

Quotas::State& Quotas::state(const std::string& tenant_id) {
  MutexLock lock(map_mu_);
  std::unique_ptr<State>& s = states_[tenant_id];
  if (!s) s = std::make_unique<State>();
  return *s;
}

void Quotas::sync_limits(State& s, const QuotaLimits& limits, int64_t now) {
  sync_bucket(s.requests, limits.requests_per_minute, now);
  sync_bucket(s.tokens, limits.tokens_per_minute, now);
}

void Quotas::roll_month(State& s, const std::string& tenant_id, int64_t now) {
  const int64_t month = utc_month_start_ns(now);
  if (!s.month_known) {
    s.spent = spend_ ? spend_(tenant_id, month, utc_next_month_start_ns(now)) : 0;
    s.month_start_ns = month;
    s.month_known = true;
  } else if (month > s.month_start_ns) {
    // Everything settled since the last roll was seen by this process, so
    // the new month starts from zero without asking the ledger.
    s.month_start_ns = month;
    s.spent = 0;
  }
}

uint64_t Quotas::counted_tokens(const TokenUsage& u, uint32_t weight_permille) {
  const u128 cached = u128{u.cached()} * weight_permille / 1000;
  return sat_add(sat_add(u.fresh_prefill, static_cast<uint64_t>(cached)), u.output_tokens);
}

// The admission steps, in admit()'s order, all under s.mu. Each check_*
// returns the refusal its limit would give, or nullopt, and charges nothing.

std::optional<Refusal> Quotas::check_concurrency(const State& s, const Tenant& tenant) {
  const uint64_t cap = tenant.quotas.max_concurrent_requests;
  if (cap == 0 || s.in_flight < cap) return std::nullopt;
  // No clock says when a running request ends; one second is a polite guess.
  return refusal(Limit::kConcurrentRequests, cap, 0, 1, 1, false, tenant.id);
}

std::optional<Refusal> Quotas::check_requests(State& s, const Tenant& tenant, int64_t now) {
  if (!s.requests) return std::nullopt;
  const int64_t wait = s.requests->ns_until(1, now).value_or(0);
  if (wait <= 0) return std::nullopt;
  return refusal(Limit::kRequestsPerMinute, tenant.quotas.requests_per_minute,
                 s.requests->available(now), ceil_s(wait), ceil_s(s.requests->ns_until_full(now)),
                 false, tenant.id);
}

std::optional<Refusal> Quotas::check_tokens(State& s, const Tenant& tenant, uint64_t tokens,
                                            int64_t now) {
  if (!s.tokens) return std::nullopt;
  const std::optional<int64_t> wait = s.tokens->ns_until(tokens, now);
  if (wait && *wait <= 0) return std::nullopt;
  return refusal(Limit::kTokensPerMinute, tenant.quotas.tokens_per_minute,
                 s.tokens->available(now), wait ? ceil_s(*wait) : 0,
                 ceil_s(s.tokens->ns_until_full(now)), !wait, tenant.id);
}

std::optional<Refusal> Quotas::check_spend(const State& s, const Tenant& tenant,
                                           uint64_t est_cost, int64_t now) {
  const uint64_t cap = tenant.quotas.monthly_spend_cap_micros;
  if (cap == 0) return std::nullopt;
  const uint64_t committed = sat_add(s.spent, s.reserved_cost);
  const uint64_t left = sat_sub(cap, committed);
  if (est_cost <= left) return std::nullopt;
  const uint64_t to_next_month = ceil_s(utc_next_month_start_ns(now) - now);
  const bool never = est_cost > cap;
  return refusal(Limit::kMonthlySpend, cap, left, never ? 0 : to_next_month, to_next_month, never,
                 tenant.id);
}

// Charges every limit at once, after every check passed.
Ticket Quotas::charge(State& s, const Tenant& tenant, const PricePlan& plan, bool take_request, uint64_t tokens,
                      uint64_t est_cost, int64_t now) {
  if (s.requests && take_request) s.requests->try_take(1, now);
  if (s.tokens) s.tokens->try_take(tokens, now);
  s.in_flight += 1;
  s.reserved_cost = sat_add(s.reserved_cost, est_cost);
  Ticket t;
  t.id = next_ticket_.fetch_add(1, std::memory_order_relaxed);
  t.tenant_id = tenant.id;
  t.reserved_tokens = tokens;
  t.reserved_cost_micros = est_cost;
  t.cached_token_weight_permille = tenant.quotas.cached_token_weight_permille;
  t.plan = plan;
  t.admitted_ns = now;
  s.open_tickets.insert(t.id);
  return t;
}

std::optional<Refusal> Quotas::arrive(const Tenant& tenant) {
  const int64_t now = clock_.now_ns();
  State& s = state(tenant.id);
  MutexLock lock(s.mu);
  sync_limits(s, tenant.quotas, now);
  std::optional<Refusal> refused;
  keep_worst(&refused, check_concurrency(s, tenant));
  keep_worst(&refused, check_requests(s, tenant, now));
  if (!refused && s.requests) s.requests->try_take(1, now);
  return refused;
}

Admission Quotas::admit(const Tenant& tenant, const PricePlan& plan, const Estimate& e) {
  const int64_t now = clock_.now_ns();
  const uint64_t tokens = sat_add(e.prompt_tokens, e.max_output_tokens);
  const uint64_t est_cost = worst_case_cost(plan, e);

  State& s = state(tenant.id);
  MutexLock lock(s.mu);
  sync_limits(s, tenant.quotas, now);
  roll_month(s, tenant.id, now);

  std::optional<Refusal> refused;
  keep_worst(&refused, check_concurrency(s, tenant));
  if (!e.arrived) keep_worst(&refused, check_requests(s, tenant, now));
  keep_worst(&refused, check_tokens(s, tenant, tokens, now));
  keep_worst(&refused, check_spend(s, tenant, est_cost, now));
  if (refused) return Admission(std::move(*refused));
  return Admission(charge(s, tenant, plan, !e.arrived, tokens, est_cost, now));
}

// Everything a settle does except the spend: frees the slot, drops the
// worst-case reservation and reconciles tokens/minute. Caller holds s.mu.
void Quotas::close_ticket(State& s, const Ticket& t, const TokenUsage& usage, int64_t now) {
  if (s.open_tickets.erase(t.id) == 0) {
    throw Error(ErrorCode::kNotFound, "ticket " + std::to_string(t.id) + " of tenant '" +
                                          t.tenant_id + "' was never issued or already settled");
  }
  s.in_flight -= 1;
  s.reserved_cost = sat_sub(s.reserved_cost, t.reserved_cost_micros);
  if (s.tokens) {
    const uint64_t used = counted_tokens(usage, t.cached_token_weight_permille);
    if (used < t.reserved_tokens) {
      s.tokens->give_back(t.reserved_tokens - used, now);
    } else {
      s.tokens->take_anyway(used - t.reserved_tokens, now);
    }
  }
}

uint64_t Quotas::settle(const Ticket& t, const TokenUsage& usage) {
  const int64_t now = clock_.now_ns();
  const std::optional<uint64_t> cost = try_cost_micros(t.plan, usage);
  State& s = state(t.tenant_id);
  {
    MutexLock lock(s.mu);
    close_ticket(s, t, usage, now);
    roll_month(s, t.tenant_id, now);
    s.spent = sat_add(s.spent, cost.value_or(kU64Max));
  }
  if (!cost) throw cost_overflow(t);
  return *cost;
}

void Quotas::withdraw(const Ticket& t) {
  const int64_t now = clock_.now_ns();
  State& s = state(t.tenant_id);
  MutexLock lock(s.mu);
  close_ticket(s, t, {}, now);
  if (s.requests) s.requests->give_back(1, now);
}

PendingSpend Quotas::settle_pending(const Ticket& t, const TokenUsage& usage) {
  const int64_t now = clock_.now_ns();
  const std::optional<uint64_t> cost = try_cost_micros(t.plan, usage);
  State& s = state(t.tenant_id);
  {
    MutexLock lock(s.mu);
    close_ticket(s, t, usage, now);
    // An unpriceable request can never be committed, so nothing is held.
    if (cost) s.reserved_cost = sat_add(s.reserved_cost, *cost);
  }
  if (!cost) throw cost_overflow(t);
  return PendingSpend{t.tenant_id, *cost};
}

void Quotas::commit_spend(const PendingSpend& p) {
  const int64_t now = clock_.now_ns();
  State& s = state(p.tenant_id);
  MutexLock lock(s.mu);
  s.reserved_cost = sat_sub(s.reserved_cost, p.cost_micros);
  roll_month(s, p.tenant_id, now);
  s.spent = sat_add(s.spent, p.cost_micros);
}

void Quotas::cancel_spend(const PendingSpend& p) {
  State& s = state(p.tenant_id);
  MutexLock lock(s.mu);
  s.reserved_cost = sat_sub(s.reserved_cost, p.cost_micros);
}

RateStatus Quotas::rate_status(const Tenant& tenant) {
  const int64_t now = clock_.now_ns();
  State& s = state(tenant.id);
  MutexLock lock(s.mu);
  sync_limits(s, tenant.quotas, now);
  RateStatus r;
  if (s.requests) {
    r.requests = {s.requests->capacity(), s.requests->available(now),
                  ceil_s(s.requests->ns_until_full(now))};
  }
  if (s.tokens) {
    r.tokens = {s.tokens->capacity(), s.tokens->available(now),
                ceil_s(s.tokens->ns_until_full(now))};
  }
  return r;
}

uint64_t Quotas::in_flight(const std::string& tenant_id) {
  State& s = state(tenant_id);
  MutexLock lock(s.mu);
  return s.in_flight;
}

uint64_t Quotas::month_spend_micros(const std::string& tenant_id) {
  State& s = state(tenant_id);
  MutexLock lock(s.mu);
  roll_month(s, tenant_id, clock_.now_ns());
  return s.spent;
}

std::optional<Refusal> check_kv_blocks(const QuotaLimits& l, uint64_t held, uint64_t adding) {
  const uint64_t cap = l.max_cached_kv_blocks;
  if (cap == 0 || sat_add(held, adding) <= cap) return std::nullopt;
  Refusal r{Limit::kKvBlocks, cap, sat_sub(cap, held), 0, 0, adding > cap, ""};
  r.message = "kv_blocks limit of " + std::to_string(cap) + " cached blocks reached (holding " +
              std::to_string(held) + ", adding " + std::to_string(adding) + ")";
  return r;
}

}  // namespace kvgate::tenancy
