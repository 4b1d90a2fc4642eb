#include "tenancy/usage_totals.h"

#include "tenancy/checked_math.h"
#include "tenancy/codec.h"

namespace kvgate::tenancy {
namespace {

struct TotalsFields {
  using Record = UsageTotals;
  static constexpr uint8_t kFormat = 1;
  static constexpr const char* kWhat = "usage rollup";
  template <class R, class Field>
  static void visit(R& t, Field& f) {
    f(t.requests);
    f(t.tokens.prompt_tokens);
    f(t.tokens.cached_device);
    f(t.tokens.cached_host);
    f(t.tokens.cached_disk);
    f(t.tokens.fresh_prefill);
    f(t.tokens.cache_written);
    f(t.tokens.output_tokens);
    f(t.tokens.cache_write_5m);
    f(t.tokens.cache_write_1h);
    f(t.cost_micros);
  }
};

void add_tokens(TokenUsage* s, const TokenUsage& u) {
  s->prompt_tokens = sat_add(s->prompt_tokens, u.prompt_tokens);
  s->cached_device = sat_add(s->cached_device, u.cached_device);
  s->cached_host = sat_add(s->cached_host, u.cached_host);
  s->cached_disk = sat_add(s->cached_disk, u.cached_disk);
  s->fresh_prefill = sat_add(s->fresh_prefill, u.fresh_prefill);
  s->cache_written = sat_add(s->cache_written, u.cache_written);
  s->output_tokens = sat_add(s->output_tokens, u.output_tokens);
  s->cache_write_5m = sat_add(s->cache_write_5m, u.cache_write_5m);
  s->cache_write_1h = sat_add(s->cache_write_1h, u.cache_write_1h);
}

}  // namespace

void add_to_totals(UsageTotals* t, const LedgerRecord& r) {
  t->requests = sat_add(t->requests, 1);
  add_tokens(&t->tokens, r.tokens);
  t->cost_micros = sat_add(t->cost_micros, r.cost_micros);
}

void add_totals(UsageTotals* t, const UsageTotals& more) {
  t->requests = sat_add(t->requests, more.requests);
  add_tokens(&t->tokens, more.tokens);
  t->cost_micros = sat_add(t->cost_micros, more.cost_micros);
}

std::string encode_usage_totals(const UsageTotals& t) { return encode_record<TotalsFields>(t); }
UsageTotals decode_usage_totals(std::string_view v) { return decode_record<TotalsFields>(v); }

}  // namespace kvgate::tenancy
