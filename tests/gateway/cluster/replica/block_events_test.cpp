// Block events end to end on loopback: a replica's BlockEventPublisher (a
// real ZeroMQ PUB socket) and the front's EventSubscriber (SUB) feeding a
// ReplicaIndex; then a real Scheduler's pool and host tier as the source;
// and the resync from a replica's snapshot, over the sockets and driven
// message by message.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "cache/tiers/host_tier.h"
#include "engine/sched/tier_identity.h"
#include "gateway/cluster/front/event_subscriber.h"
#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_error.h"
#include "gateway/cluster/replica/block_event_publisher.h"
#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace std::chrono_literals;
using namespace prefix_testing;
using front::ReplicaFeed;

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

// The block events' keys, as a front and its replicas derive them from
// the internal token they share.
const wire::EventCurveKeys& token_keys() {
  static const wire::EventCurveKeys k = wire::event_curve_keys("the internal token of these tests, 40 chars");
  return k;
}

struct Front {
  explicit Front(cache::KvIdentity mine, const wire::EventCurveKeys& keys = token_keys()) : sub(index, mu, mine, keys) {}
  route::ReplicaIndex index{8};
  std::mutex mu;
  front::EventSubscriber sub;

  Residency held(route::ReplicaId r, std::span<const cache::BlockHash> chain) {
    std::vector<Residency> out(static_cast<size_t>(index.replica_slots()));
    std::lock_guard lock(mu);
    index.lookup(chain, out);
    return out[static_cast<size_t>(r)];
  }
};

replica::BlockEventPublisherOptions publisher_options(cache::KvIdentity id) {
  replica::BlockEventPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.keys = token_keys();
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
  Linked(const cache::KvIdentity& front, replica::BlockEventPublisherOptions o)
      : f(front), r(f.index.add_replica()), pub(std::move(o)) {
    f.sub.watch(r, pub.endpoint());
    f.sub.start();
    heard = eventually([&] { return f.sub.feed(r).heard; });
  }
  Front f;
  route::ReplicaId r;
  replica::BlockEventPublisher pub;
  bool heard = false;
};

TEST(BlockEvents, StoredAndRemovedReachTheIndexAndTheDigestAgrees) {
  Linked link(some_identity(), publisher_options(some_identity()));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  replica::BlockEventPublisher& pub = link.pub;

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

// Only a holder of the internal token reads a replica's events: a
// subscriber that knows the replica's public key (not a secret) but not the
// token is refused by the replica's ZAP handler (counted), and a plain SUB
// socket without CURVE never completes its handshake; the front with the
// token hears every message.
TEST(BlockEvents, OnlyAFrontWithTheInternalTokenHearsTheEvents) {
  replica::BlockEventPublisher pub(publisher_options(some_identity()));
  wire::EventCurveKeys stranger = wire::event_curve_keys("another token altogether, 40 characters!");
  stranger.server_public = token_keys().server_public;
  Front wrong(some_identity(), stranger);
  const route::ReplicaId rw = wrong.index.add_replica();
  wrong.sub.watch(rw, pub.endpoint());
  wrong.sub.start();
  zmq::context_t ctx;
  zmq::socket_t plain(ctx, zmq::socket_type::sub);
  plain.set(zmq::sockopt::subscribe, "");
  plain.set(zmq::sockopt::linger, 0);
  plain.connect(pub.endpoint());
  Front right(some_identity());
  const route::ReplicaId r = right.index.add_replica();
  right.sub.watch(r, pub.endpoint());
  right.sub.start();
  ASSERT_TRUE(eventually([&] { return right.sub.feed(r).heard; })) << "the front with the token hears the digests";
  pub.on_block_event(stored(7));
  const cache::BlockHash h{7, 7 * 31};
  EXPECT_TRUE(eventually([&] { return right.held(r, {&h, 1}).device == 1; }));
  EXPECT_TRUE(eventually([&] { return pub.stats().refused_subscribers >= 1; })) << "the wrong key was refused";
  EXPECT_FALSE(wrong.sub.feed(rw).heard);
  EXPECT_EQ(wrong.sub.feed(rw).messages, 0);
  zmq::message_t m;
  EXPECT_FALSE(plain.recv(m, zmq::recv_flags::dontwait)) << "no CURVE, no handshake, no message";
}

// A message longer than any a replica sends is refused by ZeroMQ before
// the front reads it, and the peer that sent it is cut off: one with the
// keys cannot make the front allocate without bound. A message of the
// largest allowed size still arrives, so the bound is not too tight.
TEST(BlockEvents, AMessagePastTheSocketBoundIsNeverRead) {
  zmq::context_t ctx;
  zmq::socket_t hostile(ctx, zmq::socket_type::pub);
  hostile.set(zmq::sockopt::linger, 0);
  hostile.set(zmq::sockopt::curve_server, true);
  hostile.set(zmq::sockopt::curve_secretkey, token_keys().server_secret);
  hostile.bind("tcp://127.0.0.1:*");
  Front f(some_identity());
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, hostile.get(zmq::sockopt::last_endpoint));
  f.sub.start();
  wire::EventMessage m;
  m.type = wire::EventMessage::Type::kEvents;
  m.identity = some_identity();
  m.instance = 9;
  for (uint64_t i = 0; i < wire::kMaxSocketEvents; ++i)
    m.events.push_back({cache::BlockEventKind::kStored, policies::Tier::kHost, {i + 1, i}, {}, 1, 0});
  uint64_t seq = 0;
  const auto send = [&] {
    m.seq = ++seq;
    const std::vector<std::byte> bytes = wire::encode(m);
    (void)hostile.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
    return bytes.size();
  };
  size_t largest = 0;
  ASSERT_TRUE(eventually([&] {
    largest = send();
    return f.sub.feed(r).heard;
  })) << "a message of the largest allowed size arrives";
  EXPECT_EQ(largest, wire::kMaxSocketMessageBytes);
  std::this_thread::sleep_for(50ms);  // the last of those, read
  const int64_t before = f.sub.feed(r).messages;
  m.events.push_back({cache::BlockEventKind::kStored, policies::Tier::kHost, {1u << 30, 0}, {}, 1, 0});
  for (int i = 0; i < 20; ++i) {
    EXPECT_GT(send(), wire::kMaxSocketMessageBytes);
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(f.sub.feed(r).messages, before) << "no longer message was read";
  EXPECT_EQ(f.sub.feed(r).bad_messages, 0);
}

TEST(BlockEvents, AReplicaOfAnotherBlockSizeIsNotScoredAndTheFeedSaysWhy) {
  const cache::KvIdentity ours = some_identity();
  cache::KvIdentity theirs = ours;
  theirs.block_size = 32;
  Linked link(ours, publisher_options(theirs));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  replica::BlockEventPublisher& pub = link.pub;
  pub.on_block_event(stored(1));
  // The event has gone out in a message, and the front has read up to that
  // message (a message's seq is the count of messages sent up to it).
  ASSERT_TRUE(eventually([&] { return pub.stats().sent == 1; }));
  const auto sent_by = static_cast<uint64_t>(pub.stats().messages);
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).last_seq >= sent_by; }));
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
  replica::BlockEventPublisherOptions o = publisher_options(some_identity());
  o.queue_events = 4;
  o.batch_interval = 200ms;  // so the queue overflows between rounds
  Linked link(some_identity(), std::move(o));
  ASSERT_TRUE(link.heard);
  Front& f = link.f;
  const route::ReplicaId r = link.r;
  replica::BlockEventPublisher& pub = link.pub;
  for (uint64_t i = 10; i < 30; ++i) pub.on_block_event(stored(i));
  EXPECT_GT(pub.stats().dropped, 0);
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).digest_mismatches > 0; }));
  EXPECT_FALSE(f.sub.feed(r).view_agrees);
  EXPECT_TRUE(f.sub.feed(r).wants_resync);
  // The snapshot holds what was dropped: a resync repairs the view, and the next digest agrees.
  f.sub.begin_resync(r);
  ASSERT_TRUE(f.sub.resync(r, pub.snapshot()));
  EXPECT_FALSE(f.sub.feed(r).wants_resync);
  const int64_t digests = f.sub.feed(r).digests;
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).digests > digests; }));
  EXPECT_TRUE(f.sub.feed(r).view_agrees);
  std::lock_guard lock(f.mu);
  EXPECT_EQ(f.index.resident(r, policies::Tier::kDevice), 20);
}

TEST(BlockEvents, ARestartedReplicaIsClearedAndAGapIsCounted) {
  const cache::KvIdentity id = some_identity();
  Front f(id);
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, "inproc://unused");
  wire::EventMessage m;
  m.type = wire::EventMessage::Type::kEvents;
  m.identity = id;
  m.instance = 1;
  m.seq = 1;
  m.events.push_back({cache::BlockEventKind::kStored, policies::Tier::kDisk, {5, 6}, {}, 1, 0});
  f.sub.apply(r, m);
  const cache::BlockHash h{5, 6};
  EXPECT_EQ(f.held(r, {&h, 1}).disk, 1);
  EXPECT_FALSE(f.sub.feed(r).wants_resync) << "heard from its first message on";
  m.seq = 4;  // 2 and 3 were lost
  m.events.clear();
  f.sub.apply(r, m);
  EXPECT_EQ(f.sub.feed(r).gaps, 1);
  EXPECT_EQ(f.sub.feed(r).lost_messages, 2);
  EXPECT_TRUE(f.sub.feed(r).wants_resync) << "a gap needs a snapshot";
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
  EXPECT_FALSE(f.sub.feed(r).wants_resync) << "a restart heard from its seq 1 is whole";
  m.instance = 3;  // a restart heard late: what it held before is unknown
  m.seq = 7;
  f.sub.apply(r, m);
  EXPECT_TRUE(f.sub.feed(r).wants_resync);
  // A message that does not decode is dropped and counted.
  const std::byte junk[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  f.sub.apply_bytes(r, junk);
  EXPECT_EQ(f.sub.feed(r).bad_messages, 1);
}

// ---- resync

cache::BlockEvent removed(uint64_t n, policies::Tier tier = policies::Tier::kDevice) {
  cache::BlockEvent e = stored(n, tier);
  e.kind = cache::BlockEventKind::kRemoved;
  return e;
}

wire::WireEvent wire(const cache::BlockEvent& e) { return {e.kind, e.tier, e.hash, e.parent, e.tenant, e.depth}; }

// A raw SUB socket on a publisher: every message it sends once connected.
struct Tap {
  explicit Tap(const std::string& endpoint) {
    sub.set(zmq::sockopt::subscribe, "");
    sub.set(zmq::sockopt::curve_serverkey, token_keys().server_public);
    sub.set(zmq::sockopt::curve_publickey, token_keys().client_public);
    sub.set(zmq::sockopt::curve_secretkey, token_keys().client_secret);
    sub.set(zmq::sockopt::rcvtimeo, 2000);
    sub.connect(endpoint);
  }
  std::optional<wire::EventMessage> next() {
    zmq::message_t msg;
    if (!sub.recv(msg)) return std::nullopt;
    return wire::decode({static_cast<const std::byte*>(msg.data()), msg.size()});
  }
  zmq::context_t ctx{1};
  zmq::socket_t sub{ctx, zmq::socket_type::sub};
};

std::set<uint64_t> stored_los(const std::vector<wire::WireEvent>& events) {
  std::set<uint64_t> out;
  for (const wire::WireEvent& e : events)
    if (e.kind == cache::BlockEventKind::kStored) out.insert(e.hash.lo);
  return out;
}

TEST(BlockEvents, ASnapshotCoversExactlyTheMessagesBeforeItAndTheNextIsItsSeqPlusOne) {
  replica::BlockEventPublisherOptions o = publisher_options(some_identity());
  o.digest_interval = std::chrono::hours(1);  // only events messages, until the end
  replica::BlockEventPublisher pub(std::move(o));
  Tap tap(pub.endpoint());
  // Until the tap's connection lands: one block a round, each in a message of its own.
  std::optional<wire::EventMessage> first;
  for (uint64_t i = 1; i < 200 && !first; ++i) {
    pub.on_block_event(stored(1000 + i));
    tap.sub.set(zmq::sockopt::rcvtimeo, 20);
    first = tap.next();
  }
  ASSERT_TRUE(first);
  tap.sub.set(zmq::sockopt::rcvtimeo, 2000);
  // Drain what the warm-up still has in flight: the last warm-up block's message.
  const size_t warmup = static_cast<size_t>(pub.stats().events);
  uint64_t last = first->seq;
  while (stored_los(first->events).count(1000 + warmup) == 0) {
    first = tap.next();
    ASSERT_TRUE(first);
    last = first->seq;
  }

  for (uint64_t i = 1; i <= 5; ++i) pub.on_block_event(stored(i));
  pub.on_block_event(removed(2));
  pub.on_block_event(stored(7, policies::Tier::kDisk, 3));
  const wire::EventMessage snap = pub.snapshot();
  pub.on_block_event(stored(9));
  pub.on_block_event(removed(1));

  EXPECT_EQ(snap.type, wire::EventMessage::Type::kEvents);
  EXPECT_EQ(snap.instance, pub.instance());
  EXPECT_EQ(snap.identity, some_identity());
  EXPECT_GT(snap.seq, last);
  // Every block held when it was taken, as stored events of their tiers, the warm-up's too.
  std::set<uint64_t> want{1, 3, 4, 5, 7};
  for (size_t i = 1; i <= warmup; ++i) want.insert(1000 + i);
  EXPECT_EQ(stored_los(snap.events), want);
  EXPECT_EQ(snap.events.size(), want.size());
  for (const wire::WireEvent& e : snap.events) {
    EXPECT_EQ(e.kind, cache::BlockEventKind::kStored);
    if (e.hash.lo == 7) {
      EXPECT_EQ(e, wire(stored(7, policies::Tier::kDisk, 3)));
    } else {
      EXPECT_EQ(e.tier, policies::Tier::kDevice);
    }
  }
  // The messages after the warm-up's, up to the snapshot's seq, hold exactly what was told before it.
  std::vector<wire::WireEvent> before, after;
  for (uint64_t seq = last + 1; seq <= snap.seq + 1;) {
    const std::optional<wire::EventMessage> m = tap.next();
    ASSERT_TRUE(m) << "seq " << seq << " never came";
    ASSERT_EQ(m->seq, seq);
    ASSERT_EQ(m->type, wire::EventMessage::Type::kEvents);
    std::vector<wire::WireEvent>& into = seq <= snap.seq ? before : after;
    into.insert(into.end(), m->events.begin(), m->events.end());
    ++seq;
  }
  const std::vector<wire::WireEvent> told_before{wire(stored(1)), wire(stored(2)), wire(stored(3)),
                                                   wire(stored(4)), wire(stored(5)), wire(removed(2)),
                                                   wire(stored(7, policies::Tier::kDisk, 3))};
  EXPECT_EQ(before, told_before);
  // The next, seq S + 1, begins with what was told after it (a round may have taken only part).
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.front(), wire(stored(9)));
  EXPECT_EQ(pub.stats().snapshots, 1);
}

TEST(BlockEvents, AFrontThatSubscribesAfterTheReplicaPublishedResyncsToWhatItHolds) {
  const cache::KvIdentity id = some_identity();
  replica::BlockEventPublisher pub(publisher_options(id));
  std::vector<cache::BlockHash> chain;
  for (uint64_t i = 1; i <= 6; ++i) {  // a disk tier's blocks found at open, then the device's
    pub.on_block_event(stored(i, policies::Tier::kDisk, static_cast<int32_t>(i - 1)));
    chain.push_back({i, i * 31});
  }
  for (uint64_t i = 1; i <= 3; ++i) pub.on_block_event(stored(i, policies::Tier::kDevice, static_cast<int32_t>(i - 1)));
  // Sent before anyone listens: gone.
  ASSERT_TRUE(eventually([&] { return pub.stats().messages >= 3; }));

  Front f(id);
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, pub.endpoint());
  f.sub.start();
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).digests > 0; }));
  ReplicaFeed feed = f.sub.feed(r);
  EXPECT_TRUE(feed.wants_resync) << "its first message was past seq 1";
  EXPECT_FALSE(feed.view_agrees);
  EXPECT_EQ(f.held(r, chain).blocks(), 0);

  // What ReplicaSet does over GET /internal/v1/blocks.
  f.sub.begin_resync(r);
  EXPECT_TRUE(f.sub.feed(r).resyncing);
  ASSERT_TRUE(f.sub.resync(r, pub.snapshot()));
  feed = f.sub.feed(r);
  EXPECT_EQ(feed.resyncs, 1);
  EXPECT_FALSE(feed.wants_resync);
  EXPECT_FALSE(feed.resyncing);
  EXPECT_EQ(f.held(r, chain), (Residency{3, 0, 3, 0}));
  // Events after the snapshot apply on top, and the next digest agrees.
  pub.on_block_event(stored(4, policies::Tier::kDevice, 3));
  const int64_t digests = feed.digests;
  ASSERT_TRUE(eventually([&] { return f.sub.feed(r).digests > digests + 1; }));
  feed = f.sub.feed(r);
  EXPECT_TRUE(feed.view_agrees);
  EXPECT_FALSE(feed.wants_resync);
  EXPECT_EQ(feed.view, pub.stats().digest);
  EXPECT_EQ(f.held(r, chain), (Residency{4, 0, 2, 0}));
}

// Messages of one instance, built by hand.
struct Script {
  cache::KvIdentity id = some_identity();
  uint64_t instance = 1;
  wire::EventMessage events(uint64_t seq, std::vector<cache::BlockEvent> es) const {
    wire::EventMessage m;
    m.type = wire::EventMessage::Type::kEvents;
    m.identity = id;
    m.instance = instance;
    m.seq = seq;
    for (const cache::BlockEvent& e : es) m.events.push_back(wire(e));
    return m;
  }
  wire::EventMessage digest(uint64_t seq, const std::vector<cache::BlockEvent>& held) const {
    wire::EventMessage m = events(seq, {});
    m.type = wire::EventMessage::Type::kDigest;
    for (const cache::BlockEvent& e : held) wire::apply_event(m.digest, wire(e));
    return m;
  }
};

TEST(BlockEvents, EventsAppliedDuringAResyncAreNotLost) {
  Front f(some_identity());
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, "inproc://unused");
  const Script s;
  const auto has = [&](uint64_t n) {
    const cache::BlockHash h{n, n * 31};
    return f.held(r, {&h, 1}).device == 1;
  };
  f.sub.apply(r, s.events(1, {stored(1)}));
  f.sub.apply(r, s.events(3, {stored(3)}));  // 2 (block 2) was lost
  ASSERT_TRUE(f.sub.feed(r).wants_resync);
  EXPECT_FALSE(has(2));

  f.sub.begin_resync(r);
  f.sub.apply(r, s.events(4, {stored(4)}));              // before the snapshot was taken: in it
  f.sub.apply(r, s.events(5, {stored(5), removed(1)}));  // after it
  f.sub.apply(r, s.digest(6, {stored(2), stored(3), stored(4), stored(5)}));
  f.sub.apply(r, s.events(7, {stored(6)}));
  EXPECT_TRUE(has(5)) << "applied at once too, while the snapshot is fetched";
  // The replica's snapshot at seq 4: blocks 1 to 4.
  wire::EventMessage snap = s.events(4, {stored(1), stored(2), stored(3), stored(4)});
  ASSERT_TRUE(f.sub.resync(r, snap));
  ReplicaFeed feed = f.sub.feed(r);
  EXPECT_EQ(feed.last_seq, 7u);
  EXPECT_FALSE(feed.wants_resync);
  EXPECT_TRUE(feed.view_agrees) << "the digest kept was checked against the view rebuilt up to it";
  EXPECT_EQ(feed.resyncs, 1);
  EXPECT_FALSE(has(1)) << "removed after the snapshot";
  for (uint64_t n : {2, 3, 4, 5, 6}) EXPECT_TRUE(has(n)) << n;
  {
    std::lock_guard lock(f.mu);
    EXPECT_EQ(f.index.resident(r, policies::Tier::kDevice), 5);
  }
  wire::ReplicaDigest want{};
  for (uint64_t n : {2, 3, 4, 5, 6}) wire::apply_event(want, wire(stored(n)));
  EXPECT_EQ(feed.view, want);
  // Stale after it: dropped; the next applies.
  f.sub.apply(r, s.events(5, {stored(1)}));
  EXPECT_FALSE(has(1));
  f.sub.apply(r, s.events(8, {stored(8)}));
  EXPECT_TRUE(has(8));
  EXPECT_FALSE(f.sub.feed(r).wants_resync);

  // A message lost after the snapshot's seq: applied, but the feed still wants one.
  f.sub.begin_resync(r);
  f.sub.apply(r, s.events(10, {stored(10)}));  // 9 was lost
  ASSERT_TRUE(f.sub.resync(r, s.events(8, {stored(2), stored(3), stored(4), stored(5), stored(6), stored(8)})));
  EXPECT_TRUE(f.sub.feed(r).wants_resync);
  EXPECT_TRUE(has(10));
  EXPECT_EQ(f.sub.feed(r).last_seq, 10u);

  // A snapshot that could not be had: nothing is kept any more, and it still wants one.
  f.sub.begin_resync(r);
  f.sub.abandon_resync(r);
  EXPECT_FALSE(f.sub.feed(r).resyncing);
  EXPECT_TRUE(f.sub.feed(r).wants_resync);
  EXPECT_THROW(f.sub.resync(r, snap), route::RouteError) << "a resync needs begin_resync first";
}

TEST(BlockEvents, ASnapshotOfAnotherInstanceIsARestartAndOneOfAnInstanceLeftIsStale) {
  Front f(some_identity());
  const route::ReplicaId r = f.index.add_replica();
  f.sub.watch(r, "inproc://unused");
  Script s;
  const auto has = [&](uint64_t n) {
    const cache::BlockHash h{n, n * 31};
    return f.held(r, {&h, 1}).blocks() == 1;
  };
  f.sub.apply(r, s.events(1, {stored(1)}));
  f.sub.apply(r, s.events(2, {stored(2)}));
  f.sub.begin_resync(r);
  f.sub.apply(r, s.events(3, {stored(3)}));
  // The replica restarted before it answered: its snapshot is of instance 2.
  Script s2;
  s2.instance = 2;
  ASSERT_TRUE(f.sub.resync(r, s2.events(5, {stored(7, policies::Tier::kDisk)})));
  ReplicaFeed feed = f.sub.feed(r);
  EXPECT_EQ(feed.restarts, 1);
  EXPECT_EQ(feed.instance, 2u);
  EXPECT_EQ(feed.last_seq, 5u);
  EXPECT_FALSE(feed.wants_resync);
  for (uint64_t n : {1, 2, 3}) EXPECT_FALSE(has(n)) << "the old instance's block " << n;
  EXPECT_TRUE(has(7));
  f.sub.apply(r, s2.events(4, {stored(4)}));  // in the snapshot already
  EXPECT_FALSE(has(4));
  f.sub.apply(r, s2.events(6, {stored(6)}));
  EXPECT_TRUE(has(6));

  // It restarts again while a snapshot of instance 2 is on its way: that one is stale.
  f.sub.begin_resync(r);
  Script s3;
  s3.instance = 3;
  f.sub.apply(r, s3.events(1, {stored(30)}));
  EXPECT_FALSE(f.sub.resync(r, s2.events(6, {stored(7, policies::Tier::kDisk), stored(6)})));
  feed = f.sub.feed(r);
  EXPECT_EQ(feed.instance, 3u);
  EXPECT_EQ(feed.resyncs, 1);
  EXPECT_FALSE(feed.resyncing);
  EXPECT_TRUE(has(30));
  EXPECT_FALSE(has(7));
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
  replica::BlockEventPublisher& pub = link.pub;
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
