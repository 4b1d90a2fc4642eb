// The batch runner's control flow: admission, one batched step, finish.
//
// Invariants (check_invariants()):
//   - A running request holds one reference on every block in its table:
//     table[0, n_settled_blocks) were shared hits or are committed (cached,
//     immutable); later ones are private to it and the only ones the
//     backend writes. Positions [0, n_computed) have their K/V in the table.
//   - reserved_ == the sum of running requests' `reserved`, and
//     pool_.available() >= reserved_: every block a running request may
//     still ask for is free or evictable now, so allocate_block() cannot
//     fail. Admission keeps this (a request is admitted only if its
//     reservation fits); finishing only gives blocks back.
//   - A waiting request holds no blocks.
//
// Thread ownership: one driving thread; see batch_runner.h.
#include "engine/batch_runner.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/block_commit.h"
#include "engine/error.h"
#include "engine/request_limits.h"
#include "engine/sequence.h"

namespace kvgate {
namespace {

void release_tail_first(cache::BlockPool& pool, std::vector<BlockId>& table) {
  std::reverse(table.begin(), table.end());
  pool.release(table);
  table.clear();
}

}  // namespace

BatchRunner::BatchRunner(std::unique_ptr<Backend> backend, RunnerOptions opt)
    : backend_(std::move(backend)),
      opt_(std::move(opt)),
      block_size_(backend_->block_size()),
      pool_(backend_->num_blocks(), block_size_, static_cast<int64_t>(backend_->block_bytes()), std::move(opt_.policy)) {
  if (!opt_.hash_fn) opt_.hash_fn = cache::hash_block;
}

BatchRunner::~BatchRunner() = default;

RequestId BatchRunner::add(Request req) {
  const RequestLimits lim = request_limits(req, backend_->config(), block_size_, pool_.num_blocks());
  const int32_t max_tokens = lim.max_tokens, total_blocks = lim.total_blocks;
  std::vector<TokenId> stop_ids = req.stop_ids;
  if (!req.ignore_eos && opt_.eos >= 0) stop_ids.push_back(opt_.eos);
  const RequestId id = next_id_++;
  auto s = std::make_unique<Sequence>(id, std::move(req), max_tokens, std::move(stop_ids), total_blocks);
  s->caching = opt_.prefix_cache && s->req.use_cache;
  waiting_.push_back(std::move(s));
  return id;
}

int32_t BatchRunner::admit() {
  int32_t admitted = 0;
  while (!waiting_.empty() && (opt_.max_running <= 0 || static_cast<int32_t>(running_.size()) < opt_.max_running)) {
    if (!try_admit(*waiting_.front())) break;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    ++admitted;
  }
  return admitted;
}

bool BatchRunner::try_admit(Sequence& s) {
  const auto prompt = std::span<const TokenId>(s.req.prompt);
  const int32_t P = s.n_prompt();
  std::vector<BlockId> hits;
  if (s.caching) {
    if (s.chain.empty()) {  // a request that waited keeps its chain
      s.seed = cache::chain_seed({s.req.scope, opt_.model, block_size_, s.req.cache_salt});
      cache::extend_chain(s.chain, s.seed, prompt, block_size_, opt_.hash_fn);
    }
    hits = pool_.lookup(s.req.scope, s.seed, s.chain, prompt);
  }
  const auto n_hit = static_cast<int32_t>(hits.size());
  const bool whole_prompt_hit = n_hit > 0 && n_hit * block_size_ == P;
  const int32_t need = s.total_blocks - n_hit + (whole_prompt_hit ? 1 : 0);
  if (need > pool_.available() - reserved_) {
    release_tail_first(pool_, hits);  // wait, holding nothing
    return false;
  }
  s.table = std::move(hits);
  s.reserved = need;
  reserved_ += need;
  s.n_settled_blocks = n_hit;
  int32_t cached = n_hit * block_size_;
  if (whole_prompt_hit) {
    // Copy-on-write: the last prompt token must run (for its logits) and
    // would write its K/V into the shared last block. Run it against a
    // private copy instead; the shared block goes back to the cache.
    const BlockId shared = s.table.back();
    s.table.pop_back();
    allocate_block(s);
    backend_->copy_block(shared, s.table.back());
    pool_.release({&shared, 1});
    cached = P - 1;
  }
  s.n_computed = cached;
  s.result.cached_tokens = cached;
  s.result.fresh_prefill_tokens = P - cached;
  if (s.caching) pool_.record_query(s.req.scope, P, cached);
  return true;
}

void BatchRunner::allocate_block(Sequence& s) {
  if (s.reserved <= 0) throw std::logic_error("batch runner: request " + std::to_string(s.id) + " outgrew its reservation");
  const std::optional<BlockId> b = pool_.allocate(s.req.scope);
  if (!b) throw std::logic_error("batch runner: a reserved block could not be allocated");
  --s.reserved;
  --reserved_;
  s.table.push_back(*b);
}

StepResult BatchRunner::step() {
  StepResult out;
  admit();
  if (running_.empty()) return out;
  grow_tables();
  run_batch(out);
  return out;
}

void BatchRunner::grow_tables() {
  for (auto& s : running_)
    while (static_cast<int32_t>(s->table.size()) < s->blocks_needed(block_size_)) allocate_block(*s);
}

void BatchRunner::run_batch(StepResult& out) {
  steps_.clear();
  for (const auto& s : running_) steps_.push_back({s->next_tokens(), s->n_computed, s->table, LogitsWanted::kLast});
  backend_->forward(steps_, logits_);
  std::vector<Sequence*> ended;
  for (size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = *running_[i];
    s.n_computed = static_cast<int32_t>(s.tokens.size());
    commit_full_blocks(s);
    const TokenId t = s.sampler.sample(logits_.row(i));
    const FinishReason why = s.limit.on_token(t);
    if (why != FinishReason::kStop) {
      s.result.output.push_back(t);
      out.tokens.push_back({s.id, t});
    }
    if (why == FinishReason::kNone) {
      s.tokens.push_back(t);  // fed back next step
    } else {
      s.result.finish = why;
      ended.push_back(&s);
    }
  }
  for (Sequence* s : ended) {
    out.finished.push_back(s->id);
    finish(*s, s->result.finish, false);
  }
}

void BatchRunner::commit_full_blocks(Sequence& s) { kvgate::commit_full_blocks(pool_, s, block_size_, opt_.hash_fn); }

void BatchRunner::finish(Sequence& s, FinishReason why, bool cancelled) {
  release_tail_first(pool_, s.table);
  reserved_ -= s.reserved;
  s.reserved = 0;
  s.result.finish = why;
  s.result.cancelled = cancelled;
  results_[s.id] = std::move(s.result);
  auto it = std::find_if(running_.begin(), running_.end(), [&](const auto& p) { return p.get() == &s; });
  running_.erase(it);
}

bool BatchRunner::cancel(RequestId id) {
  auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& p) { return p->id == id; });
  if (w != waiting_.end()) {
    // Never admitted: nothing was cached for it, nothing was computed.
    RequestResult r = std::move((*w)->result);
    r.cancelled = true;
    r.fresh_prefill_tokens = r.prompt_tokens;
    results_[id] = std::move(r);
    waiting_.erase(w);
    return true;
  }
  auto r = std::find_if(running_.begin(), running_.end(), [&](const auto& p) { return p->id == id; });
  if (r == running_.end()) return false;
  finish(**r, FinishReason::kNone, true);
  return true;
}

std::optional<RequestResult> BatchRunner::take_result(RequestId id) {
  auto it = results_.find(id);
  if (it == results_.end()) return std::nullopt;
  RequestResult r = std::move(it->second);
  results_.erase(it);
  return r;
}

void BatchRunner::check_invariants() const {
  pool_.check_invariants();
  int64_t reserved = 0;
  std::vector<int32_t> refs(static_cast<size_t>(pool_.num_blocks()), 0);
  for (const auto& s : running_) {
    reserved += s->reserved;
    for (BlockId b : s->table) ++refs[static_cast<size_t>(b)];
    if (s->n_computed > static_cast<int32_t>(s->table.size()) * block_size_)
      throw std::logic_error("batch runner: K/V computed past the block table");
    for (size_t i = 0; i < s->table.size(); ++i) {
      const BlockId b = s->table[i];
      if (!pool_.is_cached(b)) continue;
      if (static_cast<int32_t>(i) >= s->n_settled_blocks)
        throw std::logic_error("batch runner: a block still being written is cached (it could be shared)");
      if (pool_.key(b).depth != static_cast<int32_t>(i) || pool_.key(b).scope != s->req.scope)
        throw std::logic_error("batch runner: a shared block sits at another depth or scope than it was cached for");
    }
    if (static_cast<int32_t>(s->table.size()) + s->reserved > s->total_blocks + 1)
      throw std::logic_error("batch runner: a request holds more blocks than it can need");
  }
  if (reserved != reserved_) throw std::logic_error("batch runner: reservations do not add up");
  if (pool_.available() < reserved_) throw std::logic_error("batch runner: reservations exceed what the pool can allocate");
  for (BlockId b = 0; b < pool_.num_blocks(); ++b)
    if (pool_.ref_count(b) != refs[static_cast<size_t>(b)])
      throw std::logic_error("batch runner: block " + std::to_string(b) + " has " + std::to_string(pool_.ref_count(b)) +
                             " references, running requests hold " + std::to_string(refs[static_cast<size_t>(b)]));
}

}  // namespace kvgate
