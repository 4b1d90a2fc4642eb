// Block events end to end on loopback: a replica's BlockEventPublisher (a
// real ZeroMQ PUB socket) and the front's EventSubscriber (SUB) feeding a
// ReplicaIndex; then a real Scheduler's pool and host tier as the source.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "cache/tiers/host_tier.h"
#include "engine/sched/tier_identity.h"
#include "gateway/route/event_subscriber.h"
#include "gateway/route/replica_index.h"
#include "gateway/serving/block_event_publisher.h"
#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace std::chrono_literals;
using namespace prefix_testing;
using route::ReplicaFeed;

constexpr int32_t kB = 16;
using route::Residency;

cache::KvIdentity some_identity() {
  cache::KvIdentity id;
  id.model = {0x51, 0x52};
  id.n_layers = 2, id.n_kv_heads = 1, id.head_dim = 8, id.kv_type = 0, id.block_size = 16;
  return id;
}

cache::BlockEvent stored(uint64_t n, policies::Tier tier = policies::Tier::kDevice, int32_t depth = 0) {
  return {cache::BlockEventKind::kStored, -1, {n, n * 31}, {}, 1, depth, tier};
}

// Waits (bounded) until `done` holds; every check reads under the index's lock.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

struct Front {
  explicit Front(cache::KvIdentity mine) : sub(index, mu, mine) {}
  route::ReplicaIndex index{8};
  std::mutex mu;
  route::EventSubscriber sub;

  Residency held(route::ReplicaId r, std::span<const cache::BlockHash> chain) {
    std::vector<Residency> out(static_cast<size_t>(index.replica_slots()));
    std::lock_guard lock(mu);
    index.lookup(chain, out);
    return out[static_cast<size_t>(r)];
  }
};

serving::BlockEventPublisherOptions publisher_options(cache::KvIdentity id) {
  serving::BlockEventPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.identity = id;
  o.batch_interval = 5ms;
  o.digest_interval = 50ms;
  return o;
}

// A replica's publisher and a front subscribed to it. The publisher's
// messages before the subscriber's connection lands are lost (PUB/SUB): a
// test starts publishing once the front has heard the replica's periodic
// digest (of nothing, yet).
struct Linked {
  Linked(const cache::KvIdentity& front, serving::BlockEventPublisherOptions o)
      : f(front), r(f.index.add_replica()), pub(std::move(o)) {
    f.sub.watch(r, pub.endpoint());
    f.sub.start();
    heard = eventually([&] { return f.sub.feed(r).heard; });
  }
  Front f;
  route::ReplicaId r;
  serving::BlockEventPublisher pub;
  bool heard = false;
};

TEST(BlockEvents, StoredAndRemovedReachTheIndexAndTheDigestAgrees) {
  Linked link(some_identity(), publisher_options(some_identity()));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  serving::BlockEventPublisher& pub = link.pub;

  std::vector<cache::BlockHash> chain;
  for (uint64_t i = 1; i <= 4; ++i) {
    pub.on_block_event(stored(i, policies::Tier::kDevice, static_cast<int32_t>(i - 1)));
    chain.push_back({i, i * 31});
  }
  pub.on_block_event(stored(3, policies::Tier::kHost, 2));
  pub.on_block_event(stored(4, policies::Tier::kHost, 3));
  ASSERT_TRUE(eventually([&] { return f.held(r, chain) == Residency{4, 0, 0, 0}; }));
  // The device lets blocks 3 and 4 go; the host still has them.
  cache::BlockEvent gone = stored(3);
  gone.kind = cache::BlockEventKind::kRemoved;
  pub.on_block_event(gone);
  gone.hash = {4, 4 * 31};
  pub.on_block_event(gone);
  ASSERT_TRUE(eventually([&] { return f.held(r, chain) == Residency{2, 2, 0, 0}; }));
  ASSERT_TRUE(eventually([&] {
    const ReplicaFeed feed = f.sub.feed(r);
    return feed.digests > 2 && feed.view == pub.stats().digest;
  }));
  const ReplicaFeed feed = f.sub.feed(r);
  EXPECT_TRUE(feed.scorable);
  EXPECT_TRUE(feed.view_agrees);
  EXPECT_EQ(feed.digest_mismatches, 0);
  EXPECT_EQ(feed.bad_messages, 0);
}

TEST(BlockEvents, AReplicaOfAnotherBlockSizeIsNotScoredAndTheFeedSaysWhy) {
  const cache::KvIdentity ours = some_identity();
  cache::KvIdentity theirs = ours;
  theirs.block_size = 32;
  Linked link(ours, publisher_options(theirs));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  serving::BlockEventPublisher& pub = link.pub;
  pub.on_block_event(stored(1));
  std::this_thread::sleep_for(50ms);
  const ReplicaFeed feed = f.sub.feed(r);
  EXPECT_FALSE(feed.scorable);
  EXPECT_EQ(feed.mismatch, "block_size 32, ours 16");
  EXPECT_EQ(feed.mismatch_field, "block_size");
  const cache::BlockHash h{1, 31};
  EXPECT_EQ(f.held(r, {&h, 1}).blocks(), 0) << "a block of another identity was credited";
  std::lock_guard lock(f.mu);
  EXPECT_EQ(f.index.resident(r, policies::Tier::kDevice), 0);
}

TEST(BlockEvents, DroppedEventsShowAsADigestMismatch) {
  serving::BlockEventPublisherOptions o = publisher_options(some_identity());
  o.queue_events = 4;
  o.batch_interval = 200ms;  // so the queue overflows between rounds
  Linked link(some_identity(), std::move(o));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  serving::BlockEventPublisher& pub = link.pub;
  for (uint64_t i = 10; i < 30; ++i) pub.on_block_event(stored(i));
  EXPECT_GT(pub.stats().dropped, 0);
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).digest_mismatches > 0; }));
  EXPECT_FALSE(f.sub.feed(r).view_agrees);
}

TEST(BlockEvents, ARestartedReplicaIsClearedAndAGapIsCounted) {
  const cache::KvIdentity id = some_identity();
  Front f(id);
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, "inproc://unused");
  route::EventMessage m;
  m.type = route::EventMessage::Type::kEvents;
  m.identity = id;
  m.instance = 1;
  m.seq = 1;
  m.events.push_back({cache::BlockEventKind::kStored, policies::Tier::kDisk, {5, 6}, {}, 1, 0});
  f.sub.apply(r, m);
  const cache::BlockHash h{5, 6};
  EXPECT_EQ(f.held(r, {&h, 1}).disk, 1);
  m.seq = 4;  // 2 and 3 were lost
  m.events.clear();
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).gaps, 1);
  EXPECT_EQ(f.sub.feed(r).lost_messages, 2);
  m.seq = 3;  // late, already past
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).gaps, 1);
  m.seq = 4;  // a duplicate
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).gaps, 1);
  EXPECT_EQ(f.sub.feed(r).last_seq, 4u);
  m.seq = 5;  // in order again
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).gaps, 1);
  EXPECT_EQ(f.sub.feed(r).last_seq, 5u);
  m.instance = 2;  // a restart: seq begins again
  m.seq = 1;
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).restarts, 1);
  EXPECT_EQ(f.held(r, {&h, 1}).blocks(), 0) << "what the old instance held was not cleared";
  // A message that does not decode is dropped and counted.
  const std::byte junk[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  f.sub.apply_bytes(r, junk);
  EXPECT_EQ(f.sub.feed(r).bad_messages, 1);
}

// The device pool and the host tier of a real scheduler as the source: the
// front learns where a prompt's blocks are without being told the tokens.
TEST(BlockEvents, ASchedulersPoolAndHostTierTellTheFrontWhereAPromptIs) {
  auto model = stories();
  const cache::KvIdentity id = tier_identity_of(*model, kB);
  auto host = std::make_shared<cache::HostTier>(int64_t{64} << 20, id);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, nullptr}});
  Linked link(id, publisher_options(id));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  serving::BlockEventPublisher& pub = link.pub;
  s->set_block_listener(&pub);
  host->set_listener(&pub);

  const Request req = greedy(some_tokens(80, model->config().vocab_size, 3), 2);
  run_one(*s, req);
  s->settle_tiers();
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  ASSERT_EQ(chain.size(), 5u);
  // Written through at commit: every block is on the device and in the host tier.
  const auto host_blocks = [&] {
    std::lock_guard lock(f.mu);
    return f.index.resident(r, policies::Tier::kHost);
  };
  EXPECT_TRUE(eventually([&] { return f.held(r, chain).device == 5 && host_blocks() == 5; }))
      << "device " << f.held(r, chain).device << ", host " << host_blocks();
}

}  // namespace
}  // namespace kvgate
