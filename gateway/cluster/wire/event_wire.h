// The block-event wire format: what a replica publishes on its ZeroMQ PUB
// socket (gateway/serving/block_event_publisher.h) and the route front
// reads (event_subscriber.h), one message per ZeroMQ frame.
//
// Two kinds of message share one header and one sequence:
//   events  a batch of blocks stored in or removed from one of the
//           replica's tiers, in the order they happened;
//   digest  what the replica holds per tier after every event sent before
//           it: a count and two order-free sums of the block hashes, which
//           the front compares with its own view of that replica to learn
//           that it lost events (a PUB socket drops when a subscriber is
//           slow or reconnecting) without asking.
// Every message states the replica's cache identity (model fingerprint, KV
// layout and element type, block size, hash scheme): a front never scores
// a replica whose hashes do not mean what its own mean, and it can say so
// from the first message it sees. The instance id is random per start of
// the replica: a new one means the replica restarted, and its sequence
// begins again at 1.
//
// Nothing secret travels (DESIGN invariant 7): scope-chained block hashes
// and their parents, the tier, a tenant's non-secret label, the depth;
// never a token id, a scope or a chain seed.
//
// Layout, little-endian, fixed widths:
//   header   magic "KVEV" (4), version u8 = 1, type u8 (1 events, 2 digest),
//            instance u64, seq u64,
//            identity: model lo u64, model hi u64, layers i32, kv heads i32,
//            head dim i32, kv type u8, block size i32, hash scheme u32
//   events   count u32, then count x { kind u8 (0 stored, 1 removed),
//            tier u8 (0 device, 1 host, 2 disk), hash lo u64, hash hi u64,
//            parent lo u64, parent hi u64, tenant u64, depth i32 }
//   digest   3 x { blocks i64, sum of hash lo u64, xor of hash hi u64 }
// Nothing may follow. decode() checks every field and length before it
// uses it: a truncated or hostile message is a WireError naming the field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/block_event.h"
#include "cache/hash128.h"
#include "cache/tiers/kv_identity.h"
#include "policies/eviction/eviction_policy.h"
#include "policies/ids.h"

namespace kvgate::wire {

class WireError : public std::runtime_error {
 public:
  explicit WireError(const std::string& what) : std::runtime_error(what) {}
};

struct WireEvent {
  cache::BlockEventKind kind = cache::BlockEventKind::kStored;
  policies::Tier tier = policies::Tier::kDevice;
  cache::BlockHash hash, parent;  // parent zero where the tier does not know it
  TenantId tenant = 0;            // the writer's non-secret label
  int32_t depth = 0;
  bool operator==(const WireEvent&) const = default;
};

// What a replica holds in one tier, as order-free sums: adding a block and
// removing it again leaves the digest as it was.
struct TierDigest {
  int64_t blocks = 0;
  uint64_t sum_lo = 0;  // sum of the hashes' low halves, mod 2^64
  uint64_t xor_hi = 0;  // xor of their high halves
  void add(const cache::BlockHash& h) { ++blocks, sum_lo += h.lo, xor_hi ^= h.hi; }
  void remove(const cache::BlockHash& h) { --blocks, sum_lo -= h.lo, xor_hi ^= h.hi; }
  bool operator==(const TierDigest&) const = default;
};
inline constexpr size_t kWireTiers = 3;  // device, host, disk
using ReplicaDigest = std::array<TierDigest, kWireTiers>;

// Applies one event to a digest (what both ends do with every event).
void apply_event(ReplicaDigest& d, const WireEvent& e);

struct EventMessage {
  enum class Type : uint8_t { kEvents = 1, kDigest = 2 };
  Type type = Type::kEvents;
  uint64_t instance = 0;
  uint64_t seq = 0;  // 1, 2, ... per instance, over both types
  cache::KvIdentity identity;
  std::vector<WireEvent> events;  // kEvents
  ReplicaDigest digest{};         // kDigest
  bool operator==(const EventMessage&) const = default;
};

inline constexpr size_t kWireHeaderBytes = 4 + 1 + 1 + 8 + 8 + (8 + 8 + 4 + 4 + 4 + 1 + 4 + 4);
inline constexpr size_t kWireEventBytes = 1 + 1 + 16 + 16 + 8 + 4;
// A message on the socket holds at most this many events (a publisher's
// batch is capped here), so it is at most kMaxSocketMessageBytes: a
// subscriber refuses a longer one unread (ZMQ_MAXMSGSIZE), and both ends
// bound their queues in bytes by it. A snapshot (over HTTP) may hold more.
inline constexpr size_t kMaxSocketEvents = 8192;
inline constexpr size_t kMaxSocketMessageBytes = kWireHeaderBytes + 4 + kMaxSocketEvents * kWireEventBytes;
// What each end may queue for one peer: about 64 MiB of the longest messages.
inline constexpr size_t kSocketQueueBytes = size_t{64} << 20;
inline constexpr int kSocketQueueMessages = static_cast<int>(kSocketQueueBytes / kMaxSocketMessageBytes);

std::vector<std::byte> encode(const EventMessage& m);
// Throws WireError naming what is wrong (truncated, bad magic, version,
// type, count, kind, tier, trailing bytes).
EventMessage decode(std::span<const std::byte> bytes);

// "" when `theirs` may be scored by a front of identity `mine`; otherwise
// the first field that differs, with both values ("block_size 32, ours
// 16"): the reason a log line and a metric label carry.
std::string identity_mismatch(const cache::KvIdentity& mine, const cache::KvIdentity& theirs);
// The metric label for that reason: "model", "layout", "kv_type",
// "block_size", "hash_scheme", or "" when they match.
std::string identity_mismatch_field(const cache::KvIdentity& mine, const cache::KvIdentity& theirs);

}  // namespace kvgate::wire
