// Invariants:
//   - a started request's ticket is settled exactly once: by finish() when
//     it ends, or withdrawn in start() when the engine refuses it;
//   - a request the engine admitted writes exactly one ledger record, built
//     from the same TokenUsage its client is told (billed_usage.h), before
//     Sink::on_done; one cancelled while still queued is settled without a
//     record (it used nothing);
//   - a Flight's TextStream is touched by the engine loop while tokens
//     arrive and by the blocking pool after the completion, never both: the
//     completion callback runs after the last token and posts the rest.
#include "gateway/serving/pipeline.h"

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <span>
#include <utility>

#include "base/error.h"
#include "engine/text/stop_strings.h"
#include "engine/text/text_stream.h"
#include "gateway/serving/billed_usage.h"
#include "gateway/serving/tenant_identity.h"
#include "tenancy/error.h"
#include "tenancy/prices.h"

namespace kvgate::serving {
namespace {

// The same usage as if nothing had been cached: what the tenant would pay
// without the prefix cache (the dashboards' "saved by caching").
tenancy::TokenUsage priced_fresh(tenancy::TokenUsage u) {
  u.fresh_prefill += u.cached();
  u.cached_device = u.cached_host = u.cached_disk = 0;
  u.cache_written = u.cache_write_5m = u.cache_write_1h = 0;
  return u;
}

// The longest prefix a request pins: what its pin needs room for.
size_t pinned_prefix(std::span<const PinSpan> pins) {
  int32_t n = 0;
  for (const PinSpan& p : pins) n = std::max(n, p.tokens);
  return static_cast<size_t>(n);
}

// The access log's line for a settled request: the numbers the client was
// told (its usage is the ledger record's). The status is the one a whole
// response is answered with; a stream was already 200 when it failed (its
// error is a frame), and is logged 500 all the same: the request failed.
void log_settled(AccessLog& log, const ServeRequest& req, const WallAnchor& clock, const Served& s,
                 const RequestTiming& timing) {
  AccessEntry e;
  e.time_ns = WallAnchor::now().wall_ns;
  e.request_id = req.request_id, e.tenant = req.who.tenant.id, e.key_id = req.who.key_id;
  // 499: nginx's "client closed request", the client went away (or the server stopped) first.
  e.status = !s.error.empty() ? 500 : s.finish == FinishReason::kCancelled ? 499 : 200;
  e.finish = !s.error.empty() ? finish_reason_name(FinishReason::kError) : finish_reason_name(s.finish);
  e.prompt_tokens = s.usage.prompt_tokens;
  e.cached_tokens = s.usage.cached();
  e.completion_tokens = s.usage.output_tokens;
  e.cost_micros = s.cost_micros;
  e.latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - clock.steady).count();
  e.ttft_ms = timing.token_times.empty() ? -1 : ttft_ms(timing);
  log.write(e);
}

}  // namespace

struct Pipeline::Flight {
  Flight(Pipeline& p, ServeRequest r, tenancy::Ticket t, std::shared_ptr<Sink> s)
      : req(std::move(r)),
        ticket(std::move(t)),
        sink(std::move(s)),
        text(p.tokenizer_, req.stop, req.continuation, [this, &p] { stop_matched(p.engine_); }),
        clock(WallAnchor::now()) {}

  // A stop string matched (on the engine loop): cancel, once the id is known.
  void stop_matched(EngineClient& engine) {
    MutexLock lock(mu);
    stop_wanted = true;
    if (id != 0) engine.cancel(id);
  }
  void started(EngineClient& engine, RequestId rid) {
    MutexLock lock(mu);
    id = rid;
    if (stop_wanted) engine.cancel(id);
  }

  ServeRequest req;
  // The tokens the text stream was given, kept only for a request with stop
  // strings: which one matched is found again from them at the end
  // (TextStream says only that one did). Engine loop, then finish().
  Tokens seen;
  tenancy::Ticket ticket;
  std::shared_ptr<Sink> sink;
  TextStream text;
  WallAnchor clock;
  Mutex mu;
  RequestId id ABSL_GUARDED_BY(mu) = 0;
  bool stop_wanted ABSL_GUARDED_BY(mu) = false;
};

Pipeline::Pipeline(EngineClient& engine, tenancy::Tenancy& tenancy, const Tokenizer& tokenizer, BlockingPool& billing,
                   ServingMetrics& metrics, AccessLog* access_log)
    : engine_(engine),
      tenancy_(tenancy),
      tokenizer_(tokenizer),
      billing_(billing),
      metrics_(metrics),
      access_log_(access_log) {}

std::variant<RequestId, NotStarted> Pipeline::start(ServeRequest req, std::shared_ptr<Sink> sink) {
  if (!access_log_) return begin(std::move(req), std::move(sink));
  // A refusal is logged here, with what the request was; begin() consumes it.
  const auto t0 = SteadyClock::now();
  const std::string request_id = req.request_id, tenant = req.who.tenant.id, key_id = req.who.key_id;
  const auto prompt_tokens = static_cast<uint64_t>(req.prompt.size());
  std::variant<RequestId, NotStarted> started = begin(std::move(req), std::move(sink));
  if (const auto* no = std::get_if<NotStarted>(&started)) {
    AccessEntry e;
    e.time_ns = WallAnchor::now().wall_ns;
    e.request_id = request_id, e.tenant = tenant, e.key_id = key_id;
    e.status = no->why == NotStarted::Why::kQuota ? 429 : no->why == NotStarted::Why::kBadRequest ? 400 : 503;
    e.finish = "-";
    e.prompt_tokens = prompt_tokens;
    e.latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
    access_log_->write(e);
  }
  return started;
}

std::optional<tenancy::Refusal> Pipeline::pin_refusal(const tenancy::QuotaLimits& quotas, TenantId label,
                                                      size_t pinned_tokens) const {
  const auto need = static_cast<uint64_t>(pinned_tokens) / static_cast<uint64_t>(engine_.bounds().block_size);
  const auto held = static_cast<uint64_t>(engine_.pinned_blocks(label));
  const std::string pinning = "pinning this prompt's " + std::to_string(need) + " KV blocks would exceed ";
  if (std::optional<tenancy::Refusal> r = tenancy::check_kv_blocks(quotas, held, need)) {
    r->message = pinning + "the tenant's cache quota of " + std::to_string(r->limit_value) + " blocks (" +
                 std::to_string(held) + " pinned now)";
    return r;
  }
  // The tenant's own pin quota, else the server's default for every tenant.
  const std::optional<PinRoom> room = engine_.pin_room();
  if (!room && quotas.max_pinned_kv_blocks == 0) return std::nullopt;  // the engine that pins checks
  const uint64_t tenant_cap =
      quotas.max_pinned_kv_blocks > 0 ? quotas.max_pinned_kv_blocks : static_cast<uint64_t>(room->tenant_default);
  if (held + need > tenant_cap) {
    tenancy::Refusal r{tenancy::Limit::kPinnedBlocks, tenant_cap, tenant_cap - std::min(held, tenant_cap), 0, 0,
                       need > tenant_cap, ""};
    r.message = pinning + "the tenant's pin quota of " + std::to_string(tenant_cap) + " blocks (" +
                std::to_string(held) + " pinned now)";
    return r;
  }
  if (!room) return std::nullopt;
  const auto all = static_cast<uint64_t>(room->pinned), cap = static_cast<uint64_t>(room->max_pinned);
  if (all + need > cap) {
    tenancy::Refusal r{tenancy::Limit::kServerPinnedBlocks, cap, cap - std::min(all, cap), 0, 0, need > cap, ""};
    r.message = pinning + "the server's cap on pinned KV blocks (model.max_pinned_percent: " + std::to_string(cap) +
                " blocks, " + std::to_string(all) + " pinned now); try again when pins expire";
    return r;
  }
  return std::nullopt;
}

std::variant<RequestId, NotStarted> Pipeline::begin(ServeRequest req, std::shared_ptr<Sink> sink) {
  // The bill fails closed: a request that could not be recorded is not run.
  if (std::optional<std::string> fault = tenancy_.billing_fault())
    return NotStarted{NotStarted::Why::kUnavailable, "kvgate cannot take requests now: " + *fault, std::nullopt};
  const TenantIdentity id = tenant_identity(tenancy_.tenants(), req.who.tenant);
  Request er;
  er.prompt = req.prompt;
  er.sampling = req.sampling;
  er.max_tokens = req.max_tokens;
  er.scope = id.scope;
  er.cache_salt = req.cache_salt;
  er.ignore_eos = req.ignore_eos;
  er.pins = req.pins;
  er.output_grammar = req.output_grammar;
  er.placement_key = placement_key(id.scope, req.prompt_cache_key);
  // The chain is hashed here, at the edge, under the tenant's scope: the
  // engine takes it with the tokens, and a router in front of many engines
  // can place the request by it.
  if (const std::optional<cache::KvIdentity>& ci = engine_.cache_identity()) {
    const cache::BlockHash seed = cache::chain_seed({id.scope, ci->model, ci->block_size, er.cache_salt});
    cache::extend_chain(er.prompt_chain, seed, er.prompt, ci->block_size);
  }
  RequestLimits lim;
  try {
    lim = request_limits(er, engine_.bounds());  // before any quota is charged
  } catch (const Error& e) {
    return NotStarted{NotStarted::Why::kBadRequest, e.what(), std::nullopt};
  }
  // A pin must fit the tenant's cache quota and pin quota beside what it
  // has pinned already, and the server's cap beside all pins: a 429 now,
  // never a pool full of pins later (the engine checks again when it pins:
  // two pins can race).
  const tenancy::QuotaLimits& quotas = req.who.tenant.quotas;
  if (!er.pins.empty()) {
    if (std::optional<tenancy::Refusal> r = pin_refusal(quotas, id.label, pinned_prefix(er.pins))) {
      metrics_.refused(req.who.tenant.id, r->limit);
      return NotStarted{NotStarted::Why::kQuota, r->message, *r};
    }
  }
  tenancy::Admission adm = tenancy_.admit(
      req.who.tenant, {static_cast<uint64_t>(er.prompt.size()), static_cast<uint64_t>(lim.max_tokens), req.arrived});
  if (!adm.admitted()) {
    metrics_.refused(req.who.tenant.id, adm.refusal().limit);
    return NotStarted{NotStarted::Why::kQuota, adm.refusal().message, adm.refusal()};
  }
  metrics_.started(req.who.tenant.id, id.label);

  auto f = std::make_shared<Flight>(*this, std::move(req), adm.ticket(), std::move(sink));
  auto on_event = [this, f](TokenId t, const Completion* done) {
    if (!done) {
      std::string piece;
      if (const Tokens* shown = f->req.tool_markers ? f->req.tool_markers->text_of(t) : nullptr) {
        for (TokenId s : *shown) piece += f->text.push(s);
        if (!f->req.stop.empty()) f->seen.insert(f->seen.end(), shown->begin(), shown->end());
      } else {
        piece = f->text.push(t);
        if (!f->req.stop.empty()) f->seen.push_back(t);
      }
      if (!piece.empty()) f->sink->on_text(piece);
      return;
    }
    billing_.post([this, f, c = *done] { finish(f, c); });
  };
  try {
    const Submitter who{id.label, f->req.priority, static_cast<int64_t>(tenancy::kv_block_limit(quotas)),
                        static_cast<int64_t>(std::min<uint64_t>(quotas.max_pinned_kv_blocks, INT64_MAX))};
    // Kept by a front's engine: a retry elsewhere tells the sink again.
    return engine_.start(std::move(er), who, std::move(on_event), [this, f](RequestId rid, std::string_view where) {
      f->started(engine_, rid);
      if (!where.empty()) f->sink->on_placed(where);
    });
  } catch (const Error& e) {
    tenancy_.quotas().withdraw(f->ticket);  // not served: the tenant is charged nothing, not even the request
    const bool busy = dynamic_cast<const EngineBusy*>(&e) != nullptr || dynamic_cast<const EngineFailed*>(&e) != nullptr;
    if (busy) metrics_.busy();
    return NotStarted{busy ? NotStarted::Why::kBusy : NotStarted::Why::kBadRequest, e.what(), std::nullopt};
  }
}

void Pipeline::finish(const std::shared_ptr<Flight>& f, const Completion& done) {
  const std::string rest = f->text.finish(done.result.finish);
  if (!rest.empty()) f->sink->on_text(rest);
  Served s;
  uint64_t uncached_cost = 0;
  s.finish = f->text.finish_reason();
  // StopStrings' match does not depend on how the text was cut, so the
  // decoded whole finds the one the stream matched.
  // (The whole decode drops a first token's dummy-prefix space, which the
  // stream may keep: with one stop string, that one.)
  if (f->text.stopped()) {
    s.stop_sequence = StopStrings(f->req.stop).push(tokenizer_.decode(f->seen)).matched;
    if (s.stop_sequence.empty() && f->req.stop.size() == 1) s.stop_sequence = f->req.stop.front();
  }
  s.usage = token_usage(done.result, f->req.pins, engine_.bounds().block_size);
  s.output = done.result.output;
  s.pin_asked = !f->req.pins.empty();
  s.pinned_tokens = static_cast<uint64_t>(done.result.pinned_tokens);
  s.pin_refused = done.result.pin_refused;
  if (done.result.finish == FinishReason::kError) s.error = done.error;
  try {
    if (consumed_work(done.timing)) {
      const RecordIds ids{f->req.request_id, f->req.who.tenant.id, f->req.who.key_id, f->req.model};
      tenancy_.finish(f->ticket, ledger_record(ids, s.usage, done.result.finish, done.timing, f->clock));
      s.recorded = true;
      s.cost_micros = tenancy::cost_micros(f->ticket.plan, s.usage);
      uncached_cost = tenancy::try_cost_micros(f->ticket.plan, priced_fresh(s.usage)).value_or(s.cost_micros);
    } else {
      tenancy_.quotas().settle(f->ticket, {});
      s.usage = {};
    }
  } catch (const tenancy::Error& e) {
    s.error = std::string("the request could not be billed: ") + e.what();
  }
  s.request_id = f->req.request_id;
  // The detail (a ledger path, a replica's URL) is the operator's: logged
  // here; the client is told only that it failed, and the id to quote.
  if (!s.error.empty())
    std::fprintf(stderr, "kvgate: request %s (tenant %s) failed: %s\n", s.request_id.c_str(),
                 f->req.who.tenant.id.c_str(), s.error.c_str());
  metrics_.finished(f->req.who.tenant.id, s.finish, s.recorded ? s.usage : tenancy::TokenUsage{}, s.cost_micros,
                    uncached_cost, done.timing);
  if (access_log_) log_settled(*access_log_, f->req, f->clock, s, done.timing);
  f->sink->on_done(s);
}

}  // namespace kvgate::serving
