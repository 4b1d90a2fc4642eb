// The block-event wire format: what encode writes decode reads back, and a
// damaged or hostile message is a WireError naming what is wrong.
#include "gateway/cluster/wire/event_wire.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kvgate::wire {
namespace {

cache::KvIdentity identity() {
  cache::KvIdentity id;
  id.model = {0x1234, 0x5678};
  id.n_layers = 12, id.n_kv_heads = 4, id.head_dim = 64, id.kv_type = 1, id.block_size = 16;
  return id;
}

EventMessage batch(size_t n) {
  EventMessage m;
  m.type = EventMessage::Type::kEvents;
  m.instance = 0xabcdef;
  m.seq = 7;
  m.identity = identity();
  for (size_t i = 0; i < n; ++i)
    m.events.push_back({i % 3 ? cache::BlockEventKind::kStored : cache::BlockEventKind::kRemoved,
                        static_cast<policies::Tier>(i % 3), {i + 1, ~i}, {i, i * 7}, 40 + i, static_cast<int32_t>(i)});
  return m;
}

TEST(EventWire, EventsAndDigestsRoundTrip) {
  const EventMessage m = batch(5);
  const std::vector<std::byte> bytes = encode(m);
  EXPECT_EQ(bytes.size(), kWireHeaderBytes + 4 + 5 * kWireEventBytes);
  EXPECT_EQ(decode(bytes), m);

  EventMessage d;
  d.type = EventMessage::Type::kDigest;
  d.instance = 3, d.seq = 9, d.identity = identity();
  for (const WireEvent& e : m.events) apply_event(d.digest, e);
  EXPECT_EQ(decode(encode(d)), d);
  EXPECT_EQ(decode(encode(batch(0))).events.size(), 0u);
}

TEST(EventWire, ADigestIsOrderFreeAndARemovalUndoesAStore) {
  ReplicaDigest a{}, b{};
  const WireEvent x{cache::BlockEventKind::kStored, policies::Tier::kHost, {11, 12}, {}, 1, 0};
  const WireEvent y{cache::BlockEventKind::kStored, policies::Tier::kHost, {21, 22}, {}, 1, 1};
  apply_event(a, x), apply_event(a, y);
  apply_event(b, y), apply_event(b, x);
  EXPECT_EQ(a, b);
  WireEvent gone = x;
  gone.kind = cache::BlockEventKind::kRemoved;
  apply_event(a, gone);
  ReplicaDigest only_y{};
  apply_event(only_y, y);
  EXPECT_EQ(a, only_y);
  EXPECT_EQ(a[1].blocks, 1);
  EXPECT_EQ(a[0].blocks, 0);
}

void expect_error(std::vector<std::byte> bytes, const std::string& says) {
  try {
    decode(bytes);
    ADD_FAILURE() << "decoded a bad message; wanted an error saying " << says;
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(EventWire, EveryDamageIsAnErrorNamingIt) {
  const std::vector<std::byte> good = encode(batch(3));
  expect_error({}, "truncated at magic");
  for (size_t cut : {size_t{3}, size_t{5}, size_t{20}, kWireHeaderBytes, kWireHeaderBytes + 2})
    expect_error({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)}, "truncated");
  expect_error({good.begin(), good.end() - 1}, "bytes of events");
  std::vector<std::byte> v = good;
  v[0] = std::byte{'X'};
  expect_error(v, "bad magic");
  v = good, v[4] = std::byte{9};
  expect_error(v, "version 9");
  v = good, v[5] = std::byte{7};
  expect_error(v, "unknown type 7");
  v = good, v.push_back(std::byte{0});
  expect_error(v, "bytes of events");
  // A count that would ask for gigabytes is refused before any allocation.
  v = good;
  const uint32_t huge = 0xffffffffu;
  std::memcpy(v.data() + kWireHeaderBytes, &huge, 4);
  expect_error(v, "count 4294967295");
  v = good, v[kWireHeaderBytes + 4] = std::byte{5};
  expect_error(v, "unknown kind 5");
  v = good, v[kWireHeaderBytes + 5] = std::byte{3};
  expect_error(v, "unknown tier 3");
  EventMessage d;
  d.type = EventMessage::Type::kDigest;
  std::vector<std::byte> dig = encode(d);
  dig.push_back(std::byte{1});
  expect_error(dig, "past its end");
}

TEST(EventWire, AnIdentityMismatchNamesTheField) {
  const cache::KvIdentity ours = identity();
  EXPECT_EQ(identity_mismatch(ours, ours), "");
  cache::KvIdentity t = ours;
  t.block_size = 32;
  EXPECT_EQ(identity_mismatch(ours, t), "block_size 32, ours 16");
  EXPECT_EQ(identity_mismatch_field(ours, t), "block_size");
  t = ours, t.kv_type = 0;
  EXPECT_EQ(identity_mismatch_field(ours, t), "kv_type");
  t = ours, t.n_kv_heads = 8;
  EXPECT_EQ(identity_mismatch(ours, t), "layout 12x8x64, ours 12x4x64");
  t = ours, t.hash_scheme = 2;
  EXPECT_EQ(identity_mismatch_field(ours, t), "hash_scheme");
  t = ours, t.model.hi ^= 1;
  EXPECT_EQ(identity_mismatch(ours, t), "model fingerprint differs");
  EXPECT_EQ(identity_mismatch_field(ours, t), "model");
}

}  // namespace
}  // namespace kvgate::wire
