// Invariant: no intermediate of the cost formula can wrap. Products are
// 64x64->128 bit (max (2^64-1)^2 < 2^128); the four-term sum and the rounding
// bias are added with explicit carry checks. No signed or 128x128 multiply is
// used, so the code needs no compiler-rt helpers under UBSan either.
#include "tenancy/prices.h"

#include "tenancy/checked_math.h"
#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {

constexpr u128 kPerMillion = 1'000'000;

// A price plan's one field list, in on-disk order (codec.h).
struct PlanFields {
  using Record = PricePlan;
  static constexpr uint8_t kFormat = 1;
  static constexpr const char* kWhat = "price plan";
  template <class R, class Field>
  static void visit(R& p, Field& f) {
    f(p.id);
    f(p.fresh_input_per_mtok);
    f(p.cached_input_per_mtok);
    f(p.cache_write_per_mtok);
    f(p.output_per_mtok);
  }
};

bool add128(u128 a, u128 b, u128* out) {
  const u128 s = a + b;  // unsigned: wraps by definition, detected below
  if (s < a) return false;
  *out = s;
  return true;
}

}  // namespace

uint64_t default_cached_price(uint64_t fresh) {
  return static_cast<uint64_t>((u128{fresh} + 5) / 10);
}

PricePlan PricePlan::with_default_cached(std::string id, uint64_t fresh, uint64_t output,
                                         uint64_t write) {
  return PricePlan{std::move(id), fresh, default_cached_price(fresh), write, output};
}

std::optional<uint64_t> try_cost_micros(const PricePlan& p, const TokenUsage& u) {
  const u128 terms[] = {
      u128{u.fresh_prefill} * p.fresh_input_per_mtok,
      u128{u.cached_device} * p.cached_input_per_mtok,
      u128{u.cached_host} * p.cached_input_per_mtok,
      u128{u.cached_disk} * p.cached_input_per_mtok,
      u128{u.cache_written} * p.cache_write_per_mtok,
      u128{u.output_tokens} * p.output_per_mtok,
  };
  u128 total = kPerMillion / 2;  // round half up: add half a unit, then floor
  for (u128 t : terms) {
    if (!add128(total, t, &total)) return std::nullopt;
  }
  const u128 cost = total / kPerMillion;
  if (cost > u128{UINT64_MAX}) return std::nullopt;
  return static_cast<uint64_t>(cost);
}

uint64_t cost_micros(const PricePlan& plan, const TokenUsage& u) {
  const std::optional<uint64_t> c = try_cost_micros(plan, u);
  if (!c) {
    throw Error(ErrorCode::kOverflow,
                "cost under plan '" + plan.id + "' exceeds 2^64-1 micro-units");
  }
  return *c;
}

std::string encode_plan(const PricePlan& p) { return encode_record<PlanFields>(p); }

PricePlan decode_plan(std::string_view v) { return decode_record<PlanFields>(v); }

}  // namespace kvgate::tenancy
