// The Scheduler over the prefix cache: what is reused, what is run, what is
// reported, on stories260K (block size 16 unless said otherwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace kvgate::prefix_testing;

constexpr cache::ScopeId kTenantA{1, 1}, kTenantB{2, 2};

std::vector<std::byte> block_bytes(Backend& be, BlockId b) {
  std::vector<std::byte> buf(be.block_bytes());
  be.copy_block_to_host(b, buf);
  return buf;
}

TEST(PrefixScheduler, WholePromptHitRunsOnlyTheLastTokenAndWritesNoSharedBlock) {
  auto log = std::make_shared<StepLog>();
  auto sched = make_prefix_scheduler(stories(), {.log = log});
  const Tokens prompt = some_tokens(48, 512, 1);  // exactly 3 blocks
  RequestResult first = run_one(*sched, greedy(prompt, 6));
  EXPECT_EQ(first.cached_tokens, 0);
  EXPECT_EQ(first.fresh_prefill_tokens, 48);

  // Every cached block's bytes, before the repeat.
  const cache::BlockPool& pool = sched->pool();
  std::map<BlockId, std::vector<std::byte>> before;
  for (BlockId b = 0; b < pool.num_blocks(); ++b)
    if (pool.is_cached(b)) before[b] = block_bytes(sched->backend(), b);
  ASSERT_GE(before.size(), 3u);

  const size_t steps_before = log->steps.size();
  RequestResult again = run_one(*sched, greedy(prompt, 6));
  EXPECT_EQ(again.output, first.output);
  EXPECT_EQ(again.cached_tokens, 47);
  EXPECT_EQ(again.fresh_prefill_tokens, 1);
  EXPECT_EQ(again.prompt_tokens, again.cached_tokens + again.fresh_prefill_tokens);
  // The prefill step ran one token, the last prompt token, at position 47.
  ASSERT_GT(log->steps.size(), steps_before);
  EXPECT_EQ(log->steps[steps_before], (std::vector<std::pair<int32_t, int32_t>>{{47, 1}}));
  // ... against a private copy of the last shared block.
  EXPECT_EQ(log->copies.size(), 1u);
  if (!log->copies.empty()) {
    EXPECT_TRUE(before.contains(log->copies[0].first));
    EXPECT_FALSE(before.contains(log->copies[0].second));
  }
  // No block that was cached before has changed.
  for (const auto& [b, bytes] : before) {
    ASSERT_TRUE(pool.is_cached(b));
    EXPECT_TRUE(block_bytes(sched->backend(), b) == bytes) << "cached block " << b << " was written";
  }
}

TEST(PrefixScheduler, RepeatedPromptReusesItsFullBlocksOnly) {
  auto log = std::make_shared<StepLog>();
  auto sched = make_prefix_scheduler(stories(), {.log = log});
  const Tokens prompt = some_tokens(40, 512, 2);  // 2 full blocks and 8 tokens
  RequestResult first = run_one(*sched, greedy(prompt, 5));
  const size_t steps_before = log->steps.size();
  RequestResult again = run_one(*sched, greedy(prompt, 5));
  EXPECT_EQ(again.output, first.output);
  EXPECT_EQ(again.cached_tokens, 32);
  EXPECT_EQ(again.fresh_prefill_tokens, 8);
  EXPECT_EQ(log->steps[steps_before], (std::vector<std::pair<int32_t, int32_t>>{{32, 8}}));
  EXPECT_TRUE(log->copies.empty());
}

TEST(PrefixScheduler, NextTurnReusesThePreviousAnswer) {
  auto log = std::make_shared<StepLog>();
  auto sched = make_prefix_scheduler(stories(), {.log = log});
  const Tokens prompt = some_tokens(20, 512, 3);
  RequestResult turn1 = run_one(*sched, greedy(prompt, 30));
  ASSERT_EQ(turn1.output.size(), 30u);
  // Positions with K/V after turn 1: 20 + 30 - 1 = 49 (the last output token
  // is never fed), so 3 full blocks are cached, the last one filled by the answer.
  EXPECT_EQ(turn1.cache_written_tokens, 3 * 16);
  Tokens next = prompt;
  next.insert(next.end(), turn1.output.begin(), turn1.output.end());
  const Tokens user = some_tokens(7, 512, 4);
  next.insert(next.end(), user.begin(), user.end());
  const size_t steps_before = log->steps.size();
  RequestResult turn2 = run_one(*sched, greedy(next, 4));
  EXPECT_EQ(turn2.prompt_tokens, 57);
  EXPECT_EQ(turn2.cached_tokens, 48);
  EXPECT_EQ(turn2.fresh_prefill_tokens, 9);
  EXPECT_EQ(log->steps[steps_before], (std::vector<std::pair<int32_t, int32_t>>{{48, 9}}));

  auto cold = make_prefix_scheduler(stories(), {.prefix_cache = false});
  EXPECT_EQ(run_one(*cold, greedy(next, 4)).output, turn2.output);
}

TEST(PrefixScheduler, AFinishedRequestsTailIsEvictedBeforeItsHead) {
  auto sched = make_prefix_scheduler(stories(), {.block_size = 16, .n_blocks = 8});
  const Tokens a = some_tokens(64, 512, 20);
  run_one(*sched, greedy(a, 1));  // 4 cached blocks, released tail first
  // 7 blocks for 100 positions: the 4 free ones and 3 evicted ones.
  RequestResult b = run_one(*sched, greedy(some_tokens(100, 512, 21), 1));
  EXPECT_EQ(b.cached_tokens, 0);
  EXPECT_EQ(sched->pool().stats().all.evictions, 3);
  EXPECT_EQ(run_one(*sched, greedy(a, 1)).cached_tokens, 16);  // a's head block survived
}

TEST(PrefixScheduler, IdenticalTokensUnderAnotherScopeOrSaltNeverShare) {
  auto sched = make_prefix_scheduler(stories(), {});
  const Tokens prompt = some_tokens(64, 512, 5);
  const Submitter a{.tenant = 1}, b{.tenant = 2};  // the labels the counters are kept under
  EXPECT_EQ(run_one(*sched, greedy(prompt, 3, kTenantA), a).cached_tokens, 0);
  EXPECT_EQ(run_one(*sched, greedy(prompt, 3, kTenantB), b).cached_tokens, 0);
  Request salted = greedy(prompt, 3, kTenantA);
  salted.cache_salt = "user-42";
  EXPECT_EQ(run_one(*sched, salted, a).cached_tokens, 0);
  EXPECT_EQ(run_one(*sched, greedy(prompt, 3, kTenantA), a).cached_tokens, 63);
  EXPECT_EQ(run_one(*sched, salted, a).cached_tokens, 63);

  // Every cached block is a scope's own: A and B each stored the prompt's 4 blocks.
  cache::CacheStats st = sched->pool().stats();
  ASSERT_EQ(st.tenants.size(), 2u);
  EXPECT_EQ(st.tenants[0].second.blocks_stored, 4 + 4);  // A: unsalted and salted chains
  EXPECT_EQ(st.tenants[1].second.blocks_stored, 4);
  EXPECT_EQ(st.tenants[1].second.hit_tokens, 0);
  EXPECT_EQ(st.tenants[0].second.hit_tokens, 63 + 63);
  EXPECT_EQ(st.tenants[0].second.query_tokens, 4 * 64);
}

// Every block hashes to the same value: the index can hold one block, and
// every other lookup meets a block whose parent, depth or tokens differ.
cache::BlockHash constant_hash(const cache::BlockHash&, std::span<const TokenId>) { return {42, 42}; }

TEST(PrefixScheduler, ForcedHashCollisionsAreMisses) {
  auto sched = make_prefix_scheduler(stories(), {.hash_fn = constant_hash});
  auto cold = make_prefix_scheduler(stories(), {.prefix_cache = false});
  const Tokens a = some_tokens(48, 512, 6), b = some_tokens(48, 512, 7);
  RequestResult ra = run_one(*sched, greedy(a, 8));
  RequestResult rb = run_one(*sched, greedy(b, 8));
  EXPECT_EQ(rb.cached_tokens, 0);  // b's blocks all collide with a's first block
  EXPECT_EQ(rb.output, run_one(*cold, greedy(b, 8)).output);
  // a again: its first block is the one indexed and verifies; the second
  // collides with it (same hash, other parent and depth) and misses.
  RequestResult ra2 = run_one(*sched, greedy(a, 8));
  EXPECT_EQ(ra2.cached_tokens, 16);
  EXPECT_EQ(ra2.output, ra.output);
  EXPECT_EQ(ra.output, run_one(*cold, greedy(a, 8)).output);
}

TEST(PrefixScheduler, ConcurrentIdenticalPromptsBothRunAndOneIsCached) {
  auto sched = make_prefix_scheduler(stories(), {});
  const Tokens prompt = some_tokens(35, 512, 8);
  auto x = sched->submit(greedy(prompt, 10), {});
  auto y = sched->submit(greedy(prompt, 10), {});
  drain(*sched);
  ASSERT_TRUE(x->finished() && y->finished());
  RequestResult rx = x->wait().result, ry = y->wait().result;
  EXPECT_EQ(rx.output, ry.output);
  EXPECT_EQ(rx.cached_tokens + ry.cached_tokens, 0);  // admitted together: nothing was cached yet
  EXPECT_EQ(rx.cache_written_tokens + ry.cache_written_tokens, 2 * 16);  // (35 + 10 - 1) / 16 = 2 blocks, stored once
  EXPECT_EQ(sched->pool().stats().blocks_in_use, 0);
  EXPECT_EQ(sched->pool().stats().blocks_cached_free, 2);
}

TEST(PrefixScheduler, CacheOffPerRequestNeitherReadsNorWrites) {
  auto sched = make_prefix_scheduler(stories(), {});
  const Tokens prompt = some_tokens(40, 512, 9);
  run_one(*sched, greedy(prompt, 3));
  Request off = greedy(prompt, 3);
  off.use_cache = false;
  RequestResult r = run_one(*sched, off);
  EXPECT_EQ(r.cached_tokens, 0);
  EXPECT_EQ(r.cache_written_tokens, 0);
  EXPECT_EQ(sched->pool().stats().all.query_tokens, 40);  // only the first was a query
}

TEST(PrefixScheduler, StopIdsAndEosEndARequest) {
  const Tokens prompt = some_tokens(20, 512, 10);
  auto plain = make_prefix_scheduler(stories(), {.prefix_cache = false});
  RequestResult full = run_one(*plain, greedy(prompt, 12));
  ASSERT_EQ(full.output.size(), 12u);
  EXPECT_EQ(full.finish, FinishReason::kLength);
  const TokenId stop = full.output[4];
  const auto first = static_cast<size_t>(std::find(full.output.begin(), full.output.end(), stop) - full.output.begin());
  const Tokens before_stop(full.output.begin(), full.output.begin() + static_cast<ptrdiff_t>(first));

  Request stop_at = greedy(prompt, 12);
  stop_at.stop_ids = {stop};
  RequestResult r = run_one(*plain, stop_at);
  EXPECT_EQ(r.finish, FinishReason::kStop);
  EXPECT_EQ(r.output, before_stop);  // the stop id itself is not output

  auto with_eos = make_prefix_scheduler(stories(), {.prefix_cache = false, .eos = stop});
  Request honours = greedy(prompt, 12);
  honours.ignore_eos = false;
  EXPECT_EQ(run_one(*with_eos, honours).output, before_stop);
  EXPECT_EQ(run_one(*with_eos, greedy(prompt, 12)).output, full.output);  // ignore_eos
}

TEST(PrefixScheduler, CancelGivesEveryBlockBack) {
  auto sched = make_prefix_scheduler(stories(), {.max_running = 1});
  auto a = sched->submit(greedy(some_tokens(50, 512, 11), 40), {});
  auto b = sched->submit(greedy(some_tokens(30, 512, 12), 40), {});
  for (int i = 0; i < 3; ++i) sched->step();
  EXPECT_EQ(sched->running(), 1u);
  EXPECT_EQ(sched->waiting(), 1u);
  EXPECT_TRUE(sched->cancel(a->id()));
  EXPECT_TRUE(sched->cancel(b->id()));
  EXPECT_FALSE(sched->cancel(b->id()));
  EXPECT_TRUE(sched->idle());
  ASSERT_TRUE(a->finished() && b->finished());
  EXPECT_EQ(a->wait().result.finish, FinishReason::kCancelled);
  EXPECT_EQ(b->wait().result.finish, FinishReason::kCancelled);
  RequestResult ra = a->wait().result, rb = b->wait().result;
  EXPECT_EQ(ra.finish, FinishReason::kCancelled);
  EXPECT_EQ(ra.output.size(), 3u);
  EXPECT_EQ(rb.finish, FinishReason::kCancelled);
  EXPECT_EQ(rb.prompt_tokens, rb.cached_tokens + rb.fresh_prefill_tokens);
  cache::CacheStats st = sched->pool().stats();
  EXPECT_EQ(st.blocks_in_use, 0);
  EXPECT_EQ(st.blocks_cached_free, 3);  // a's 3 full prompt blocks; its partial one was freed
  sched->check_invariants();
}

TEST(PrefixScheduler, RefusesRequestsThatCanNeverRun) {
  auto sched = make_prefix_scheduler(stories(), {.block_size = 16, .n_blocks = 4});
  EXPECT_THROW(sched->submit(greedy({}, 1), {}), Error);
  EXPECT_THROW(sched->submit(greedy({1, 99999}, 1), {}), Error);
  EXPECT_THROW(sched->submit(greedy(some_tokens(60, 512, 13), 1), {}), Error);  // 4 blocks + the spare
  EXPECT_NO_THROW(sched->submit(greedy(some_tokens(40, 512, 13), 8), {}));
  Request bad = greedy({1, 2}, 1);
  bad.sampling.top_p = 2;
  EXPECT_THROW(sched->submit(bad, {}), Error);
  EXPECT_EQ(sched->waiting(), 1u);  // only the one that fits was queued
}

struct EventCounter final : cache::BlockEventListener {
  void on_block_event(const cache::BlockEvent& e) override {
    (e.kind == cache::BlockEventKind::kStored ? stored : removed)++;
  }
  int64_t stored = 0, removed = 0;
};

TEST(PrefixScheduler, CountersAndEventsAddUp) {
  auto sched = make_prefix_scheduler(stories(), {.block_size = 8, .n_blocks = 12});
  EventCounter events;
  sched->set_block_listener(&events);
  int64_t prompt = 0, cached = 0, written = 0;
  const Tokens system = some_tokens(20, 512, 14);
  for (uint32_t i = 0; i < 10; ++i) {
    Tokens p = system;
    const Tokens user = some_tokens(5 + i, 512, 100 + i % 3);
    p.insert(p.end(), user.begin(), user.end());
    RequestResult r = run_one(*sched, greedy(p, 20));
    EXPECT_EQ(r.prompt_tokens, r.cached_tokens + r.fresh_prefill_tokens);
    prompt += r.prompt_tokens, cached += r.cached_tokens, written += r.cache_written_tokens / 8;  // block size 8
  }
  cache::CacheStats st = sched->pool().stats();
  EXPECT_EQ(st.all.query_tokens, prompt);
  EXPECT_EQ(st.all.hit_tokens, cached);
  EXPECT_EQ(st.all.blocks_stored, written);
  EXPECT_EQ(events.stored, written);
  EXPECT_EQ(events.removed, st.all.evictions);
  EXPECT_GT(st.all.evictions, 0);
  EXPECT_GT(cached, 0);
  EXPECT_EQ(st.blocks_in_use + st.blocks_cached_free + st.blocks_free, st.blocks_total);
}

}  // namespace
}  // namespace kvgate

namespace kvgate {
namespace {

using namespace kvgate::prefix_testing;

// A chain hashed at the edge (the gateway's) is the scheduler's own: the
// same request hits the same blocks either way; a chain that does not fit
// the prompt is refused by name.
TEST(PrefixScheduler, APromptChainHashedAtTheEdgeIsUsedAsTheSchedulersOwn) {
  auto sched = make_prefix_scheduler(stories(), {});
  const Tokens prompt = some_tokens(70, 512, 41);
  run_one(*sched, greedy(prompt, 3));
  Request edge = greedy(prompt, 3);
  const cache::BlockHash seed = cache::chain_seed({*edge.scope, fingerprint_of(*stories()), 16, ""});
  cache::extend_chain(edge.prompt_chain, seed, edge.prompt, 16);
  ASSERT_EQ(edge.prompt_chain.size(), 4u);
  EXPECT_EQ(run_one(*sched, edge).cached_tokens, 64);
  Request wrong = greedy(prompt, 3);
  wrong.prompt_chain.resize(2);
  try {
    sched->submit(wrong, {});
    FAIL() << "a chain of the wrong length was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prompt chain"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvgate
