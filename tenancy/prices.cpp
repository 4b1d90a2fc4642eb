// Invariant: no intermediate of the cost formula can wrap. Products are
// 64x64->128 bit (max (2^64-1)^2 < 2^128); the four-term sum and the rounding
// bias are added with explicit carry checks. No signed or 128x128 multiply is
// used, so the code needs no compiler-rt helpers under UBSan either.
#include "tenancy/prices.h"

#include <algorithm>

#include "tenancy/checked_math.h"
#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {

constexpr u128 kPerMillion = 1'000'000;

// A price plan's one field list, in on-disk order (codec.h). Format 2 added
// the pinned-write prices; a format-1 plan reads back with their defaults.
template <uint8_t Format>
struct PlanFields {
  using Record = PricePlan;
  static constexpr uint8_t kFormat = Format;
  static constexpr const char* kWhat = "price plan";
  template <class R, class Field>
  static void visit(R& p, Field& f) {
    f(p.id);
    f(p.fresh_input_per_mtok);
    f(p.cached_input_per_mtok);
    f(p.cache_write_per_mtok);
    f(p.output_per_mtok);
    if constexpr (Format >= 2) {
      f(p.cache_write_5m_per_mtok);
      f(p.cache_write_1h_per_mtok);
    }
  }
};
using CurrentPlanFields = PlanFields<2>;

bool add128(u128 a, u128 b, u128* out) {
  const u128 s = a + b;  // unsigned: wraps by definition, detected below
  if (s < a) return false;
  *out = s;
  return true;
}

// fresh * num / den, rounded half up; saturates (a price past 2^64-1
// micro-units per million tokens is no price anyone sets).
uint64_t scaled_price(uint64_t fresh, uint64_t num, uint64_t den) {
  const u128 p = (u128{fresh} * num + den / 2) / den;
  return p > u128{UINT64_MAX} ? UINT64_MAX : static_cast<uint64_t>(p);
}

}  // namespace

uint64_t default_cached_price(uint64_t fresh) { return scaled_price(fresh, 1, 10); }
uint64_t default_write_5m_price(uint64_t fresh) { return scaled_price(fresh, 5, 4); }
uint64_t default_write_1h_price(uint64_t fresh) { return scaled_price(fresh, 2, 1); }

PricePlan PricePlan::with_default_cached(std::string id, uint64_t fresh, uint64_t output,
                                         uint64_t write) {
  return PricePlan{std::move(id),
                   fresh,
                   default_cached_price(fresh),
                   write,
                   output,
                   default_write_5m_price(fresh),
                   default_write_1h_price(fresh)};
}

std::optional<uint64_t> try_cost_micros(const PricePlan& p, const TokenUsage& u) {
  // Pinned writes are part of fresh_prefill; clamped so that a usage that
  // breaks the split cannot bill a token twice.
  const uint64_t pin_5m = std::min(u.cache_write_5m, u.fresh_prefill);
  const uint64_t pin_1h = std::min(u.cache_write_1h, u.fresh_prefill - pin_5m);
  const u128 terms[] = {
      u128{u.fresh_prefill - pin_5m - pin_1h} * p.fresh_input_per_mtok,
      u128{pin_5m} * p.cache_write_5m_per_mtok,
      u128{pin_1h} * p.cache_write_1h_per_mtok,
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

std::string encode_plan(const PricePlan& p) { return encode_record<CurrentPlanFields>(p); }

PricePlan decode_plan(std::string_view v) {
  if (record_format(v) != 1) return decode_record<CurrentPlanFields>(v);
  PricePlan p = decode_record<PlanFields<1>>(v);
  p.cache_write_5m_per_mtok = default_write_5m_price(p.fresh_input_per_mtok);
  p.cache_write_1h_per_mtok = default_write_1h_price(p.fresh_input_per_mtok);
  return p;
}

}  // namespace kvgate::tenancy
