// The scheduler's step: plan (running first, then admissions), run, sample.
//
// Invariants (check_invariants()):
//   - A running sequence holds one reference on every block in its table;
//     table[0, n_settled_blocks) are shared hits or committed (cached,
//     immutable), later ones private to it and the only ones written.
//     Positions [0, n_computed) have their K/V in the table. Blocks are
//     allocated when a step is about to write their positions, so nothing
//     is reserved ahead and a running sequence may find no block: then
//     someone is preempted.
//   - A waiting sequence holds no blocks and n_computed == 0; it is in
//     waiting_ and in queue_ under the same id, and nowhere else.
//   - Within a step, a planned sequence is never preempted: victims are
//     picked only among the running sequences not yet planned.
//
// Thread ownership: one driving thread (scheduler.h).
#include "engine/sched/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "engine/sched/cache_quota.h"
#include "engine/sched/sequence.h"
#include "engine/sched/tier_identity.h"

namespace kvgate {
namespace {

const std::string kUnspellable = "the model's vocabulary cannot spell any continuation its output grammar allows";

int32_t ceil_div(int64_t a, int32_t b) { return static_cast<int32_t>((a + b - 1) / b); }
int32_t size32(const Tokens& t) { return static_cast<int32_t>(t.size()); }
// `percent` of `n` blocks, rounded down (a share of 0 allows no pins at all).
int32_t share_of(int32_t n, int32_t percent) {
  if (percent < 0 || percent > 100) throw Error("a pin share must be between 0 and 100 percent");
  return static_cast<int32_t>(int64_t{n} * percent / 100);
}

}  // namespace

Scheduler::Scheduler(std::unique_ptr<Backend> backend, SchedulerOptions opt)
    : backend_(std::move(backend)),
      copier_(*backend_),
      opt_(std::move(opt)),
      block_size_(backend_->block_size()),
      pool_(backend_->num_blocks(), block_size_, static_cast<int64_t>(backend_->block_bytes()), std::move(opt_.policy)),
      max_pinned_blocks_(share_of(pool_.num_blocks(), opt_.max_pinned_percent)),
      tenant_pinned_blocks_(share_of(pool_.num_blocks(), opt_.tenant_pinned_percent)),
      queue_(opt_.order),
      tiers_(pool_, copier_) {
  if (!opt_.hash_fn) opt_.hash_fn = cache::hash_block;
  pool_.set_listener(opt_.block_events);
  if (opt_.max_step_tokens < 1) throw Error("max_step_tokens must be at least 1");
  if (opt_.max_running <= 0 || opt_.max_running > opt_.max_step_tokens) opt_.max_running = opt_.max_step_tokens;
  if (opt_.tiers && opt_.prefix_cache) tiers_.attach(opt_.tiers, tier_identity(*backend_, opt_.model));
}

Scheduler::~Scheduler() = default;

// Alone in the pool, a request must fit with one spare (the copy-on-write
// target of a whole-prompt hit): then preempting everyone else always makes
// room for it, and the scheduler cannot deadlock.
std::optional<cache::KvIdentity> Scheduler::cache_identity() const {
  if (!opt_.prefix_cache) return std::nullopt;
  return tier_identity(*backend_, opt_.model);
}

RequestBounds Scheduler::bounds() const {
  const ModelConfig& c = backend_->config();
  return {c.context_length, c.vocab_size, block_size_, pool_.num_blocks()};
}

std::shared_ptr<RequestStream> Scheduler::submit(Request req, Submitter who, std::shared_ptr<RequestStream> stream,
                                                 std::optional<SteadyClock::time_point> arrival) {
  const RequestLimits lim = request_limits(req, bounds());
  std::vector<TokenId> stop_ids = req.stop_ids;
  if (!req.ignore_eos && opt_.eos >= 0) stop_ids.push_back(opt_.eos);
  if (!stream) stream = std::make_shared<RequestStream>(next_id_++);
  const RequestId id = stream->id();
  if (waiting_.contains(id) ||
      std::any_of(running_.begin(), running_.end(), [&](const auto& p) { return p->id == id; }))
    throw Error("request id " + std::to_string(id) + " is already in flight");
  auto s = std::make_unique<Seq>(id, std::move(req), lim.max_tokens, std::move(stop_ids), lim.total_blocks);
  s->caching = opt_.prefix_cache && s->req.use_cache;
  s->who = who;
  s->stream = stream;
  s->timing.arrival = arrival.value_or(SteadyClock::now());
  s->timing.arrival_step = step_no_;
  if (s->caching) {
    s->seed = cache::chain_seed({s->scope(), opt_.model, block_size_, s->req.cache_salt});
    if (!s->req.prompt_chain.empty()) adopt_prompt_chain(*s);
    ensure_chain(*s);
    if (opt_.order.prefer_cached_prefix || tiers_.attached())
      s->n_prefix_hit = pool_.match_length(s->scope(), s->seed, s->chain, s->tokens);
    tiers_.prefetch(*s, s->n_prefix_hit);
  }
  queue_.push({id, who.tenant, who.priority, static_cast<int64_t>(s->n_prefix_hit) * block_size_});
  waiting_[id] = std::move(s);
  return stream;
}

// The caller hashed the prompt at the edge: take its chain (checked in full
// where invariants are checked; a wrong one could only cause misses).
void Scheduler::adopt_prompt_chain(Seq& s) {
  if (s.req.prompt_chain.size() != s.tokens.size() / static_cast<size_t>(block_size_))
    throw Error("the request's prompt chain has " + std::to_string(s.req.prompt_chain.size()) +
                " links; its prompt has " + std::to_string(s.tokens.size() / static_cast<size_t>(block_size_)) +
                " full blocks");
  s.chain = std::move(s.req.prompt_chain);
  s.req.prompt_chain.clear();
#ifdef KVGATE_CHECK_INVARIANTS
  std::vector<cache::BlockHash> mine;
  cache::extend_chain(mine, s.seed, s.tokens, block_size_, opt_.hash_fn);
  if (mine != s.chain) throw std::logic_error("scheduler: the request's prompt chain is not its prompt's");
#endif
}

void Scheduler::ensure_chain(Seq& s) {
  if (s.caching && s.chain.size() < s.tokens.size() / static_cast<size_t>(block_size_))
    cache::extend_chain(s.chain, s.seed, s.tokens, block_size_, opt_.hash_fn);
}

StepReport Scheduler::step() {
  StepReport rep;
  rep.step = ++step_no_;
  tiers_.collect();
  expire_pins();
  budget_ = opt_.max_step_tokens;
  plan_.clear();
  schedule_running(rep);
  // A step that had to preempt is short of blocks: admitting now would only
  // preempt again (vLLM v1 does the same).
  if (rep.preempted == 0) admit_waiting(rep);
  if (!plan_.empty()) {
    run_planned(rep);
  } else if (!queue_.empty()) {
    // Nothing ran while requests wait: they wait on the tiers (a prefetch
    // from disk, or blocks held for a copy down). Sleep on them, not spin.
    tiers_.wait_for(queue_.peek()->id);
  }
#ifdef KVGATE_CHECK_INVARIANTS
  check_invariants();
#endif
  return rep;
}

// Unchunked, a prompt runs whole even past the budget (the budget then only
// stops further admissions this step): otherwise a prompt longer than the
// budget would wait for every decode to end.
int32_t Scheduler::chunk_for(int32_t pending) const {
  if (pending <= 1 || !opt_.chunked_prefill) return pending;
  return std::min(pending, budget_);
}

// Running sequences go in admission order, so the decoding ones (admitted
// earlier) come before the one still prefilling, which gets what is left:
// decodes are never held back by a chunk. There are at most max_running <=
// max_step_tokens of them, so every decode fits.
void Scheduler::schedule_running(StepReport& rep) {
  size_t i = 0;
  while (i < running_.size() && budget_ > 0) {
    Seq& s = *running_[i];
    const int32_t n = chunk_for(size32(s.tokens) - s.n_computed);
    bool preempted_self = false;
    while (!grow_to(s, s.n_computed + n)) {
      const size_t v = pick_victim(i);
      preempted_self = v == i;
      preempt(v);
      ++rep.preempted;
      if (preempted_self) break;
    }
    if (preempted_self) continue;  // running_[i] is now the next sequence
    plan_.push_back({&s, n});
    budget_ -= n;
    ++i;
  }
}

bool Scheduler::grow_to(Seq& s, int32_t positions) {
  while (static_cast<int32_t>(s.table.size()) * block_size_ < positions) {
    const std::optional<BlockId> b = pool_.allocate(s.who.tenant);
    if (!b) return false;
    s.table.push_back(*b);
  }
  return true;
}

size_t Scheduler::pick_victim(size_t first) const {
  // The lowest priority, then the most recently admitted (the least work lost).
  size_t v = first;
  for (size_t j = first + 1; j < running_.size(); ++j) {
    const Seq& a = *running_[j];
    const Seq& b = *running_[v];
    if (a.who.priority < b.who.priority || (a.who.priority == b.who.priority && a.admission > b.admission)) v = j;
  }
  return v;
}

void Scheduler::preempt(size_t index) {
  std::unique_ptr<Seq> p = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  Seq& s = *p;
  s.n_lost = s.n_computed;
  release_blocks(s);  // full blocks were committed: they stay cached (and were copied down)
  s.n_computed = 0;
  s.n_settled_blocks = 0;
  ++s.result.preemptions;
  ++preemptions_;
  queue_.push_front({s.id, s.who.tenant, s.who.priority, 0});
  if (s.caching) tiers_.prefetch(s, pool_.match_length(s.scope(), s.seed, s.chain, s.tokens));
  waiting_[s.id] = std::move(p);
}

void Scheduler::release_blocks(Seq& s) {
  std::reverse(s.table.begin(), s.table.end());  // tail first: under LRU the tail goes before the head
  pool_.release(s.table);
  s.table.clear();
}

void Scheduler::admit_waiting(StepReport& rep) {
  while (budget_ > 0 && !queue_.empty() && static_cast<int32_t>(running_.size()) < opt_.max_running) {
    const RequestId id = queue_.peek()->id;
    auto it = waiting_.find(id);
    if (!try_admit(*it->second)) break;  // the head waits; nothing behind it jumps the queue
    queue_.pop();
    running_.push_back(std::move(it->second));
    waiting_.erase(it);
    ++rep.admitted;
  }
}

// What admitting a sequence now would take, given the cached blocks its
// lookup returned.
struct Scheduler::AdmitPlan {
  std::vector<BlockId> hits;  // referenced by the lookup
  bool whole_hit = false;     // every prompt token is in a matched block
  int32_t cached = 0;         // prompt positions whose K/V is reused
  int32_t chunk = 0;          // tokens fed this step
  int32_t need = 0;           // blocks to allocate now (copy-on-write target included)
};

bool Scheduler::try_admit(Seq& s) {
  ensure_chain(s);
  // Its blocks are being looked up below the device: it waits for them
  // (while the running sequences step) rather than recompute them.
  if (tiers_.prefetch_pending(s.id)) return false;
  // Leave a little room for the running sequences' next decode blocks, so an
  // admission does not cause a preemption on the very next step.
  const int32_t headroom = running_.empty() ? 0 : std::max(1, pool_.num_blocks() / 100);
  std::vector<BlockId> hits;
  TierExchange::Restored below;
  if (s.caching) {
    hits = pool_.lookup(s.scope(), s.seed, s.chain, s.tokens);
    pool_.refresh_pins(hits, opt_.clock());
    below = tiers_.restore(s, hits, headroom + 1);
  }
  AdmitPlan p = plan_admission(s, std::move(hits));
  if (p.need + headroom > pool_.available()) {
    std::reverse(p.hits.begin(), p.hits.end());
    pool_.release(p.hits);
    return false;
  }
  const auto n_hits = static_cast<int32_t>(p.hits.size());
  s.n_settled_blocks = n_hits;
  s.table = std::move(p.hits);
  if (p.whole_hit) copy_on_write_last(s);
  s.n_computed = p.cached;
  if (!grow_to(s, p.cached + p.chunk)) throw std::logic_error("scheduler: admitted blocks were counted but not allocated");
  const bool resumed = s.ever_admitted;
  if (!resumed) {
    settle_first_admission(s, p.cached);
  } else {
    const int32_t recomputed = std::max(0, s.n_lost - p.cached);
    s.result.recomputed_tokens += recomputed;
    tiers_.count_resumed(recomputed);
  }
  tiers_.count_tiers(s, below, p.cached, n_hits, resumed);
  s.admission = ++admissions_;
  plan_.push_back({&s, p.chunk});
  budget_ -= p.chunk;
  return true;
}

Scheduler::AdmitPlan Scheduler::plan_admission(Seq& s, std::vector<BlockId> hits) const {
  AdmitPlan p;
  const auto n_hit = static_cast<int32_t>(hits.size());
  const int32_t T = size32(s.tokens);
  p.hits = std::move(hits);
  p.whole_hit = n_hit > 0 && n_hit * block_size_ == T;
  p.cached = p.whole_hit ? T - 1 : n_hit * block_size_;
  p.chunk = chunk_for(T - p.cached);
  const int32_t kept = p.whole_hit ? n_hit - 1 : n_hit;  // shared blocks that stay in the table
  p.need = ceil_div(p.cached + p.chunk, block_size_) - kept;
  return p;
}

// The last token must run for its logits and would write its K/V into the
// shared last block: it writes into a private copy instead.
void Scheduler::copy_on_write_last(Seq& s) {
  const BlockId shared = s.table.back();
  s.table.pop_back();
  s.n_settled_blocks = static_cast<int32_t>(s.table.size());
  const std::optional<BlockId> copy = pool_.allocate(s.who.tenant);
  if (!copy) throw std::logic_error("scheduler: the copy-on-write block was counted but not allocated");
  copier_.copy(shared, *copy);
  s.table.push_back(*copy);
  pool_.release({&shared, 1});
}

// The token accounting is that of the first admission (request.h).
void Scheduler::settle_first_admission(Seq& s, int32_t cached) {
  s.ever_admitted = true;
  s.result.cached_tokens = cached;
  s.result.cached_device_tokens = cached;  // until count_tiers finds some came from below
  s.result.fresh_prefill_tokens = s.n_prompt() - cached;
  if (s.caching) pool_.record_query(s.who.tenant, s.n_prompt(), cached);
  s.timing.admitted = SteadyClock::now();
  s.timing.admitted_step = step_no_;
}

// Commits every block of `s` past n_settled_blocks whose positions are all
// computed, extending its hash chain as needed. A block whose hash is
// already cached (another request committed it first) stays private.
void Scheduler::commit_full_blocks(Seq& s) {
  if (!s.caching) return;
  const auto B = static_cast<size_t>(block_size_);
  const auto toks = std::span<const TokenId>(s.tokens);
  for (auto i = static_cast<size_t>(s.n_settled_blocks); (i + 1) * B <= static_cast<size_t>(s.n_computed); ++i) {
    if (s.chain.size() <= i) cache::extend_chain(s.chain, s.seed, toks.first((i + 1) * B), block_size_, opt_.hash_fn);
    const cache::BlockKey key = cache::chain_key(s.chain, s.seed, s.scope(), i);
    // A tenant at its cache quota with nothing of its own to give up: the block stays private.
    if (room_in_cache_quota(pool_, s.who) && pool_.commit(s.table[i], key, toks.subspan(i * B, B))) {
      s.result.cache_written_tokens += block_size_;
      tiers_.offload(s, i, key);
    }
    s.n_settled_blocks = static_cast<int32_t>(i + 1);
  }
}

void Scheduler::run_planned(StepReport& rep) {
  batch_.clear();
  for (const Planned& p : plan_) {
    Seq& s = *p.seq;
    const bool last = s.n_computed + p.n == size32(s.tokens);
    batch_.push_back({std::span<const TokenId>(s.tokens).subspan(static_cast<size_t>(s.n_computed),
                                                                   static_cast<size_t>(p.n)),
                      s.n_computed, s.table, last ? LogitsWanted::kLast : LogitsWanted::kNone});
  }
  backend_->forward(batch_, logits_);
  const SteadyClock::time_point now = SteadyClock::now();
  std::vector<std::pair<Seq*, FinishReason>> ended;
  for (size_t i = 0; i < plan_.size(); ++i) {
    Seq& s = *plan_[i].seq;
    const bool decode = s.n_computed >= s.n_prompt();
    s.n_computed += plan_[i].n;
    commit_full_blocks(s);
    queue_.charge(s.who.tenant, plan_[i].n);  // the virtual token counter: what the engine spent on the tenant
    (decode ? rep.decode_tokens : rep.prefill_tokens) += plan_[i].n;
    if (s.n_computed < size32(s.tokens)) continue;  // a prefill chunk: no logits yet
    const Sampled next = sample(s, logits_.row(i));
    if (next.output) {
      s.result.output.push_back(next.token);
      if (s.timing.token_times.empty()) {
        s.timing.first_token = now;
        s.timing.first_token_step = step_no_;
      }
      s.timing.token_times.push_back(now);
      s.stream->push(next.token);
    }
    if (!next.ends)
      s.tokens.push_back(next.token);  // fed back next step
    else
      ended.emplace_back(&s, *next.ends);
  }
  for (auto [s, why] : ended) {
    rep.finished.push_back(s->id);
    finish(*s, why, why == FinishReason::kError ? kUnspellable : std::string());
  }
}

// The next token of `s` from its row of logits, under its output grammar if
// it has one. A stop token ends the request and is not output; so is EOS
// under a grammar (allowed only once the value is whole), even with
// ignore_eos, and the token that makes the value whole and closed ends it
// too, output. No token (ends kError) when the vocabulary cannot spell any
// continuation the grammar allows.
Scheduler::Sampled Scheduler::sample(Seq& s, std::span<const float> row) {
  Sampled out;
  if (!s.constrained) {
    out.token = s.sampler.sample(row);
    out.ends = s.limit.on_token(out.token);
    out.output = out.ends != FinishReason::kStop;
    return out;
  }
  masked_.assign(row.begin(), row.end());
  if (s.constrained->mask(masked_) == 0) {
    out.ends = FinishReason::kError;
    out.output = false;
    return out;
  }
  out.token = s.sampler.sample(masked_);
  s.constrained->accept(out.token);  // allowed by the mask
  if (out.token == s.constrained->eos()) {
    out.ends = FinishReason::kStop;
    out.output = false;
    return out;
  }
  out.ends = s.limit.on_token(out.token);
  out.output = out.ends != FinishReason::kStop;
  if (!out.ends && s.constrained->done()) out.ends = FinishReason::kStop;
  return out;
}

// A pin asks for every full block within its spans: the leading cached ones
// are pinned, each for the longest ttl of the spans it is in, if every
// bound below has room for all of them, counting blocks that could not be
// cached (the quota kept them private) as needing room too; otherwise
// nothing is pinned.
// Three bounds, each checked before anything is pinned: the tenant's cache
// quota (pins are cached blocks too), its pin quota, and the server-wide
// cap on all pins. The gateway checks the same before admission (a 429);
// here they catch pins that raced past that check.
void Scheduler::pin_prompt(Seq& s) {
  const auto blocks_of = [&](const PinSpan& p) { return static_cast<size_t>(p.tokens / block_size_); };
  size_t full = 0;
  for (const PinSpan& p : s.req.pins) full = std::max(full, blocks_of(p));
  if (full == 0) return;
  size_t n = 0;
  while (n < full && n < s.table.size() && pool_.is_cached(s.table[n])) ++n;
  const std::span<const BlockId> blocks(s.table.data(), n);
  const int64_t cache_quota = s.who.cache_quota_blocks;
  const int64_t pin_quota = s.who.pin_quota_blocks > 0 ? s.who.pin_quota_blocks : tenant_pinned_blocks_;
  const int64_t needed = pool_.unpinned_among(blocks) + static_cast<int64_t>(full - n);
  const int64_t held = pool_.pinned_blocks(s.who.tenant);
  if (n < full || (cache_quota > 0 && held + needed > cache_quota) || held + needed > pin_quota ||
      pool_.pinned_blocks() + needed > max_pinned_blocks_) {
    s.result.pin_refused = true;
    return;
  }
  for (const PinSpan& p : s.req.pins) pool_.pin(blocks.first(blocks_of(p)), s.who.tenant, p.ttl, opt_.clock());
  s.result.pinned_tokens = static_cast<int32_t>(n) * block_size_;
  s.result.cache_written_tokens = std::max(s.result.cache_written_tokens, s.result.pinned_tokens);
}

void Scheduler::finish(Seq& s, FinishReason why, const std::string& error) {
  tiers_.forget(s.id);
  if (s.caching && !s.req.pins.empty() && (why == FinishReason::kStop || why == FinishReason::kLength))
    pin_prompt(s);
  release_blocks(s);
  Completion c;
  c.result = std::move(s.result);
  c.result.finish = why;
  c.error = error;
  if (!s.ever_admitted) {  // nothing was cached for it, nothing computed
    c.result.cached_tokens = 0;
    c.result.cached_device_tokens = c.result.cached_host_tokens = c.result.cached_disk_tokens = 0;
    c.result.fresh_prefill_tokens = c.result.prompt_tokens;
  }
  c.timing = std::move(s.timing);
  c.timing.finished = SteadyClock::now();
  c.timing.finished_step = step_no_;
  std::shared_ptr<RequestStream> stream = std::move(s.stream);
  const RequestId id = s.id;
  // Erasing destroys `s`.
  if (auto w = waiting_.find(id); w != waiting_.end() && w->second.get() == &s) {
    queue_.remove(id);
    waiting_.erase(w);
  } else {
    auto r = std::find_if(running_.begin(), running_.end(), [&](const auto& p) { return p.get() == &s; });
    if (r != running_.end()) running_.erase(r);
  }
  stream->finish(std::move(c));
}

bool Scheduler::cancel(RequestId id) {
  if (auto w = waiting_.find(id); w != waiting_.end()) {
    finish(*w->second, FinishReason::kCancelled);
    return true;
  }
  auto r = std::find_if(running_.begin(), running_.end(), [&](const auto& p) { return p->id == id; });
  if (r == running_.end()) return false;
  finish(**r, FinishReason::kCancelled);
  return true;
}

void Scheduler::cancel_all() { fail_all({}); }

void Scheduler::fail_all(const std::string& why) {
  const FinishReason o = why.empty() ? FinishReason::kCancelled : FinishReason::kError;
  while (!running_.empty()) finish(*running_.back(), o, why);
  while (!waiting_.empty()) finish(*waiting_.begin()->second, o, why);
}

void Scheduler::check_invariants() const {
  pool_.check_invariants();
  std::vector<int32_t> refs(static_cast<size_t>(pool_.num_blocks()), 0);
  const std::span<const int32_t> offload_refs = tiers_.offload_refs();
  for (size_t b = 0; b < offload_refs.size(); ++b) refs[b] += offload_refs[b];
  for (const auto& s : running_) {
    for (BlockId b : s->table) ++refs[static_cast<size_t>(b)];
    if (s->n_computed > static_cast<int32_t>(s->table.size()) * block_size_)
      throw std::logic_error("scheduler: K/V computed past the block table");
    if (static_cast<int32_t>(s->table.size()) > s->total_blocks)
      throw std::logic_error("scheduler: a sequence holds more blocks than it can need");
    for (size_t i = 0; i < s->table.size(); ++i) {
      const BlockId b = s->table[i];
      if (!pool_.is_cached(b)) continue;
      if (static_cast<int32_t>(i) >= s->n_settled_blocks)
        throw std::logic_error("scheduler: a block still being written is cached");
      if (pool_.key(b).depth != static_cast<int32_t>(i) || pool_.key(b).scope != s->scope())
        throw std::logic_error("scheduler: a shared block sits at another depth or scope than it was cached for");
    }
  }
  for (const auto& [id, s] : waiting_)
    if (!s->table.empty() || s->n_computed != 0) throw std::logic_error("scheduler: a waiting request holds blocks");
  if (waiting_.size() != queue_.size()) throw std::logic_error("scheduler: the wait queue and waiting set differ");
  for (BlockId b = 0; b < pool_.num_blocks(); ++b)
    if (pool_.ref_count(b) != refs[static_cast<size_t>(b)] + (pool_.is_pinned(b) ? 1 : 0))
      throw std::logic_error("scheduler: block " + std::to_string(b) + " has " + std::to_string(pool_.ref_count(b)) +
                             " references, running requests and copies down hold " + std::to_string(refs[static_cast<size_t>(b)]) +
                             (pool_.is_pinned(b) ? " and a pin one" : ""));
}

}  // namespace kvgate
