// Admission control: requests/minute and tokens/minute token buckets,
// concurrent requests, a monthly spend cap, and the cached-KV-block cap.
//
// The gateway calls admit() before a request runs and settle() exactly once
// after it ends (finished, failed or cancelled). admit() charges the bucket
// with an estimate (prompt + max output tokens, every prompt token counted as
// fresh) and reserves the estimate's worst-case cost against the spend cap;
// settle() reconciles both with what the request really used.
//
// A caller whose spend only counts once something else accepts it (the
// ledger, in Tenancy::finish) settles in two steps instead: settle_pending()
// does all of settle() but the spend, and keeps the real cost held against
// the cap; commit_spend() or cancel_spend() then says whether it was spent.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "tenancy/clock.h"
#include "base/mutex.h"
#include "tenancy/prices.h"
#include "tenancy/quota_limits.h"
#include "tenancy/tenant.h"
#include "tenancy/token_bucket.h"
#include "tenancy/usage.h"

namespace kvgate::tenancy {

struct Estimate {
  uint64_t prompt_tokens = 0;
  uint64_t max_output_tokens = 0;
  bool arrived = false;  // arrive() has taken its request from requests/minute
};

// kPinnedBlocks: the tenant's pin quota; kServerPinnedBlocks: the server's
// cap on all pins (not the tenant's limit, but refused as one: a 429).
enum class Limit {
  kRequestsPerMinute,
  kTokensPerMinute,
  kConcurrentRequests,
  kMonthlySpend,
  kKvBlocks,
  kPinnedBlocks,
  kServerPinnedBlocks
};
// "requests", "tokens", "concurrent_requests", "monthly_spend", "kv_blocks",
// "pinned_blocks", "server_pinned_blocks".
const char* limit_name(Limit l) noexcept;

// Why a request was refused, in the terms the gateway needs for a 429 with
// Retry-After and x-ratelimit-* headers. Units follow the limit: requests,
// tokens, request slots, micro-units, KV blocks.
struct Refusal {
  Limit limit = Limit::kRequestsPerMinute;
  uint64_t limit_value = 0;    // the configured limit
  uint64_t remaining = 0;      // what is left right now
  uint64_t retry_after_s = 0;  // until this request would fit (when never_fits: 0)
  uint64_t reset_s = 0;        // until the limit is back to its full amount
  bool never_fits = false;     // the request alone exceeds the limit; do not retry
  std::string message;
};

struct Ticket {
  uint64_t id = 0;
  std::string tenant_id;
  uint64_t reserved_tokens = 0;       // charged to tokens/minute at admission
  uint64_t reserved_cost_micros = 0;  // held against the spend cap until settle
  uint32_t cached_token_weight_permille = 0;
  PricePlan plan;  // prices as of admission: the request is billed by these
  int64_t admitted_ns = 0;
};

// A settled request's cost, held against its tenant's spend cap until the
// caller commits or cancels it. Exactly one of the two must follow.
struct PendingSpend {
  std::string tenant_id;
  uint64_t cost_micros = 0;
};

class Admission {
 public:
  explicit Admission(Ticket t) : v_(std::move(t)) {}
  explicit Admission(Refusal r) : v_(std::move(r)) {}
  bool admitted() const { return std::holds_alternative<Ticket>(v_); }
  const Ticket& ticket() const { return std::get<Ticket>(v_); }
  const Refusal& refusal() const { return std::get<Refusal>(v_); }

 private:
  std::variant<Ticket, Refusal> v_;
};

// The state of one rate window, for x-ratelimit-{limit,remaining,reset}-*.
struct RateWindow {
  uint64_t limit = 0;  // 0: unlimited
  uint64_t remaining = 0;
  uint64_t reset_s = 0;
};
struct RateStatus {
  RateWindow requests;
  RateWindow tokens;
};

class Quotas {
 public:
  // Spend already on the books for a tenant in [from_ns, to_ns); asked once
  // per tenant per process, so a restart does not forget this month's bill.
  using SpendSource =
      std::function<uint64_t(const std::string& tenant_id, int64_t from_ns, int64_t to_ns)>;

  explicit Quotas(const WallClock& clock, SpendSource spend = {});
  ~Quotas();
  Quotas(const Quotas&) = delete;
  Quotas& operator=(const Quotas&) = delete;

  // A request as it arrives, before its body is parsed or tokenized: takes
  // its one request from requests/minute, or refuses it (that limit, or
  // the tenant's concurrency full) before that work is done. An arrived
  // request counts against requests/minute whether or not it is admitted:
  // parsing and tokenizing a 4 MiB body that then fails a check is work
  // done for the tenant. admit() of an Estimate that `arrived` does not
  // take the request again.
  std::optional<Refusal> arrive(const Tenant& tenant);
  Admission admit(const Tenant& tenant, const PricePlan& plan, const Estimate& estimate);
  // Frees the ticket's concurrency slot, refunds (or further charges) the
  // tokens/minute bucket by the difference between estimate and usage, and
  // adds the real cost to the month's spend. Returns that cost. Throws
  // kNotFound for a ticket that is unknown or already settled, and kOverflow
  // (after all the bookkeeping, with spend saturated) if the cost overflows.
  uint64_t settle(const Ticket& ticket, const TokenUsage& usage);
  // The server could not take an admitted request (its engine was full):
  // as if it had never been admitted. The slot, the reserved tokens and
  // the request it counted against requests/minute are all given back, so a
  // client retrying a 503 as told loses nothing. Throws like settle().
  void withdraw(const Ticket& ticket);
  // settle() without adding to the month's spend: the ticket's worst-case
  // reservation is replaced by its real cost, which stays reserved so that
  // no concurrent admission can use that headroom meanwhile. Throws like
  // settle(); on kOverflow (after the bookkeeping) nothing stays held.
  PendingSpend settle_pending(const Ticket& ticket, const TokenUsage& usage);
  // Moves the held cost into this month's spend.
  void commit_spend(const PendingSpend& p);
  // Releases the held cost; nothing is spent.
  void cancel_spend(const PendingSpend& p);

  RateStatus rate_status(const Tenant& tenant);
  uint64_t in_flight(const std::string& tenant_id);
  uint64_t month_spend_micros(const std::string& tenant_id);

  // Tokens a finished request counts against tokens/minute.
  static uint64_t counted_tokens(const TokenUsage& u, uint32_t cached_weight_permille);

 private:
  // One tenant's limits and counters, under its own mu (quota.cpp's
  // invariants).
  struct State {
    Mutex mu;
    std::optional<TokenBucket> requests ABSL_GUARDED_BY(mu);  // engaged while the limit is nonzero
    std::optional<TokenBucket> tokens ABSL_GUARDED_BY(mu);
    uint64_t in_flight ABSL_GUARDED_BY(mu) = 0;
    std::unordered_set<uint64_t> open_tickets ABSL_GUARDED_BY(mu);
    bool month_known ABSL_GUARDED_BY(mu) = false;
    int64_t month_start_ns ABSL_GUARDED_BY(mu) = 0;
    uint64_t spent ABSL_GUARDED_BY(mu) = 0;  // this UTC month, settled requests
    // Open tickets' worst-case cost, plus the real cost of pending spends.
    uint64_t reserved_cost ABSL_GUARDED_BY(mu) = 0;
  };

  State& state(const std::string& tenant_id) ABSL_LOCKS_EXCLUDED(map_mu_);
  void sync_limits(State& s, const QuotaLimits& limits, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  void roll_month(State& s, const std::string& tenant_id, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  void close_ticket(State& s, const Ticket& t, const TokenUsage& usage, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // admit()'s steps: each check_* is one limit, charge() takes all of them.
  static std::optional<Refusal> check_concurrency(const State& s, const Tenant& tenant)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static std::optional<Refusal> check_requests(State& s, const Tenant& tenant, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static std::optional<Refusal> check_tokens(State& s, const Tenant& tenant, uint64_t tokens,
                                             int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static std::optional<Refusal> check_spend(const State& s, const Tenant& tenant,
                                            uint64_t est_cost, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  Ticket charge(State& s, const Tenant& tenant, const PricePlan& plan, bool take_request, uint64_t tokens,
                uint64_t est_cost, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  const WallClock& clock_;
  SpendSource spend_;
  std::atomic<uint64_t> next_ticket_{1};
  Mutex map_mu_;
  // The map, not the States: each State has its own mu.
  std::unordered_map<std::string, std::unique_ptr<State>> states_ ABSL_GUARDED_BY(map_mu_);
};

// The cap on KV blocks a tenant may keep cached (0: unlimited).
inline uint64_t kv_block_limit(const QuotaLimits& l) { return l.max_cached_kv_blocks; }
// nullopt if the tenant, holding `held` cached blocks, may cache `adding`
// more; otherwise a kKvBlocks refusal (the cache should evict the tenant's
// own blocks first, or skip caching).
std::optional<Refusal> check_kv_blocks(const QuotaLimits& l, uint64_t held, uint64_t adding);

}  // namespace kvgate::tenancy
