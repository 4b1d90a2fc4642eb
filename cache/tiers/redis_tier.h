// RedisTier: a BlockStore on a Redis server that every replica of one model
// shares, below each replica's disk tier (stacked_store.h) or instead of it,
// so that a prefix computed on one replica is restored on another.
//
// What is stored: each block is one sealed record (block_record.h), the same
// bytes the disk tier keeps, encrypted and authenticated under the cluster
// key (redis_seal.h), as the value of the string key
//
//   kvgate:kv:2:<identity>:<scope tag>:<block tag>
//
// in lowercase hex: <identity> the 16 digits of identity_digest() (model
// fingerprint, KV layout, element type, block size, hash scheme), <scope
// tag> and <block tag> 32 digits each of keyed tags (RedisSeal::tag) of the
// identity and the tenant's cache scope, and of those and the block's chain
// hash: Redis sees no scope and no hash. Two models or two tenants never
// share a key. A value that does not open (planted, altered, moved, or under
// a key this replica does not hold) is a miss, counted (`unsealed`) and
// deleted; one that opens is still verified by the reader (the mover's
// check_record): one that fails is deleted and counted, a miss.
//
// Capacity is Redis's: run it with maxmemory and maxmemory-policy
// allkeys-lru (or allkeys-lfu), and it evicts the least recently read or
// written records. With `ttl` set each record also expires that long after
// its last write. Under noeviction a full Redis refuses writes: counted as
// write errors, never a failed request.
//
// Each connection sends AUTH (a user and password from the config) when
// Redis asks for one.
//
// What Redis holds, without asking: the mover calls contains() for every
// block it walks and before every write, so contains() never goes to the
// network. It answers from a bounded in-memory set of keys this tier wrote,
// read, or was told of: every write is also PUBLISHed on the channel
// kvgate:kv:1:<identity>:written, which each tier's subscriber thread
// listens to, and at each (re)connect the subscriber SCANs the identity's
// keys. The set is approximate both ways. A key Redis evicted or expired,
// or another replica deleted, stays in it until a get() finds it gone: that
// false positive costs one failed read. A key announced while the
// subscriber was disconnected, or forgotten past the set's bound, is
// absent: a miss, and on the write path a rewrite of the same bytes.
//
// Failures are misses, never errors: connecting and every command have a
// timeout (50 ms by default), and a connection that failed is retried no
// sooner than a backoff that doubles from reconnect_min to reconnect_max
// (with jitter, so replicas do not retry in step): while Redis is down each
// get() is an immediate, counted miss, never a connect storm, never an
// exception. Writes never wait: enqueue() copies the record into a bounded
// queue (refused, counted, when full) and one writer thread sends the queue
// in FIFO order, pipelined (SET, PUBLISH per record, then the replies); a
// batch that fails is dropped and counted.
//
// Trust: a client of Redis without the key file reads no record, learns
// no scope or chain hash, and cannot plant a record a replica serves; it
// can still delete or evict records (misses), and see sizes and timing.
//
// Thread-safety: every member may be called from any thread, except that
// nothing may run concurrently with the destructor. enqueue, contains and
// stats take a short lock; get, get_many, drop_corrupt and put_raw_for_test
// do network round trips on one reader connection, one call at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "cache/tiers/block_record.h"
#include "cache/tiers/block_store.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/redis_seal.h"
#include "cache/tiers/tier_key.h"
#include "cache/tiers/tier_stats.h"

namespace kvgate::cache {

namespace detail {
class RedisConnection;  // one hiredis context and its reconnect backoff (redis_connection.h)
}

struct RedisTierOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  KvIdentity identity;
  std::shared_ptr<const RedisSeal> seal;  // the cluster key (required)
  // AUTH's credentials; no password: no AUTH. No user: the default user.
  std::string user, password;
  // Connecting, and each command (a pipeline: each reply), at most this long.
  std::chrono::milliseconds timeout{50};
  // 0: records stay until Redis evicts them (maxmemory-policy).
  std::chrono::seconds ttl{0};
  // Bytes of records waiting for the writer; past it, enqueue() refuses
  // (counted). A record larger than this is still taken when the queue is empty.
  size_t write_queue_bytes = size_t{64} << 20;
  // Keys contains() remembers (about 100 bytes each).
  size_t known_keys = size_t{1} << 18;
  // After a failed connection, the first retry waits reconnect_min; each
  // failure doubles it, up to reconnect_max; a success resets it.
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5000};
};

struct RedisTierStats {
  // stored: records enqueue() accepted; refused: not taken (queue full,
  // another identity) or lost in a failed write; hits + misses: get()s
  // (and get_many's keys); faults: records found corrupt (each deleted);
  // unsealed: values that did not open (each deleted, a miss);
  // write_errors: failed batches and error replies (each drops its
  // records); persisted: records Redis acknowledged; queued, queued_bytes:
  // waiting for the writer; blocks: keys contains() knows of.
  // capacity_bytes and used_bytes are 0: Redis's maxmemory is the capacity.
  TierStats tier;
  int64_t read_errors = 0;  // reads that failed (not connected, timed out, an error reply): misses too
  int64_t unsealed = 0;     // values that did not open under the cluster key: misses too
  int64_t connects = 0;     // connections made (the reader's, the writer's, the subscriber's)
  bool connected = false;   // the reader is connected, and the writer's last attempt did not fail
};

// The channel writes are announced on.
std::string redis_written_channel(const KvIdentity& id);

class RedisTier final : public BlockStore {
 public:
  // Starts the writer and the subscriber, which connect in the background:
  // a Redis that is down at start is a tier that misses until it is up.
  // Throws std::invalid_argument for an invalid identity, no seal, an empty
  // host or a port outside 1..65535.
  explicit RedisTier(RedisTierOptions options);
  ~RedisTier() override;  // sends what is queued (or drops it, Redis being down), then stops
  RedisTier(const RedisTier&) = delete;
  RedisTier& operator=(const RedisTier&) = delete;

  const KvIdentity& identity() const override { return identity_; }
  // "host:port", for logs and the admin API.
  const std::string& address() const { return address_; }
  // The Redis key of `key`'s record.
  std::string record_name(const TierKey& key) const;

  // Copies a sealed record into the write queue. False when the queue is
  // full or the record's header does not read or is of another identity
  // (refused, counted), or the key is known stored or queued (not counted).
  bool enqueue(std::span<const std::byte> record, TenantId owner) override;
  // From the queue if it is still waiting there, else a GET. Nothing when
  // Redis has no such key or the read failed (both misses, counted).
  std::optional<std::vector<std::byte>> get(const TierKey& key) override;
  // The keys' GETs in one pipeline: one round trip for a chain's next blocks.
  using BlockStore::get_many;
  std::vector<std::optional<std::vector<std::byte>>> get_many(std::span<const TierKey> keys,
                                                              const OnRead& on_read) override;
  // Known stored (written, read, announced or scanned) or queued; no round trip.
  bool contains(const TierKey& key) const override;
  // A record found corrupt: counted under fault_name(why), forgotten and
  // DELeted. (A good record another replica wrote between the GET and the
  // DEL is deleted too: a later miss, never a wrong block.)
  void drop_corrupt(const TierKey& key, RecordFault why) override;

  // Deletes every record of `scope` (the admin API's tenant eviction): a
  // SCAN of the scope's tag and a DEL per page, on the reader connection,
  // after what is queued is written. The number deleted, or -1 when Redis
  // could not be reached or failed part way (what was deleted stays so).
  int64_t evict_scope(const ScopeId& scope);

  // Waits until everything queued before the call is written or dropped.
  void flush();
  RedisTierStats stats() const;

  // Tests: SETs `value` sealed as the record of `key` (synchronously,
  // bypassing the queue), so that damaged records can be planted; with
  // sealed = false, the bytes as they are (a forgery). False when the
  // write failed.
  bool put_raw_for_test(const TierKey& key, std::span<const std::byte> value, bool sealed = true);

 private:
  // A bounded set holding about the last `capacity` keys added: two
  // generations, the older dropped when the newer has half the capacity.
  class KnownKeys {
   public:
    explicit KnownKeys(size_t capacity) : half_(std::max<size_t>(1, capacity / 2)) {}
    bool contains(const TierKey& k) const { return young_.contains(k) || old_.contains(k); }
    void add(const TierKey& k);
    void erase(const TierKey& k) { young_.erase(k), old_.erase(k); }
    size_t size() const { return young_.size() + old_.size(); }

   private:
    size_t half_;
    std::unordered_set<TierKey, TierKeyHasher> young_, old_;
  };
  struct Pending {
    TierKey key;
    std::vector<std::byte> record;
  };
  using Reply = std::optional<std::vector<std::byte>>;

  void writer_loop() ABSL_LOCKS_EXCLUDED(mu_);
  void write_batch(const std::vector<std::shared_ptr<const Pending>>& batch) ABSL_LOCKS_EXCLUDED(mu_);
  void subscriber_loop() ABSL_LOCKS_EXCLUDED(mu_);
  // The identity's keys into known_; false when the connection failed.
  bool scan_known() ABSL_LOCKS_EXCLUDED(mu_);
  // The reader's GETs, pipelined; counts hits, misses and errors.
  std::vector<Reply> read(std::span<const TierKey> keys) ABSL_LOCKS_EXCLUDED(read_mu_, mu_);
  // Known keys are names, not keys: a record's two tags (tags_of), as
  // parse_key reads them back from a name.
  TierKey tags_of(const TierKey& key) const;
  Hash128 scope_tag(const ScopeId& scope) const;
  std::string name_of_tags(const TierKey& tags) const;
  // The names of `scope`'s records all begin with this.
  std::string scope_names(const ScopeId& scope) const;
  std::optional<TierKey> parse_key(std::string_view text) const;
  void log_throttled(const std::string& what) ABSL_LOCKS_EXCLUDED(mu_);
  // The reader's state() and connects(), which are atomics: stats() must
  // not wait for read_mu_, held across a reader's round trip.
  const detail::RedisConnection& reader_status() const;

  const KvIdentity identity_;
  const std::shared_ptr<const RedisSeal> seal_;
  const uint64_t identity_digest_;  // identity_digest(identity_), in every tag
  const std::string address_;
  const std::string key_prefix_;  // "kvgate:kv:2:<identity>:"
  const std::string channel_;
  const std::chrono::milliseconds ttl_;
  const size_t write_queue_bytes_;
  const size_t known_capacity_;

  Mutex read_mu_;  // one reader call at a time on reader_
  const std::unique_ptr<detail::RedisConnection> reader_ ABSL_PT_GUARDED_BY(read_mu_);
  // Each used by its own thread only, so unguarded.
  const std::unique_ptr<detail::RedisConnection> writer_conn_;     // the writer thread's
  const std::unique_ptr<detail::RedisConnection> subscriber_conn_; // the subscriber thread's
  const std::unique_ptr<detail::RedisConnection> scan_conn_;       // the subscriber thread's, for SCAN

  mutable Mutex mu_;
  CondVar work_cv_, done_cv_, stop_cv_;
  KnownKeys known_ ABSL_GUARDED_BY(mu_);  // of tags_of()
  std::deque<std::shared_ptr<const Pending>> fifo_ ABSL_GUARDED_BY(mu_);
  // Waiting or being written.
  std::unordered_map<TierKey, std::shared_ptr<const Pending>, TierKeyHasher> queued_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t enqueued_seq_ ABSL_GUARDED_BY(mu_) = 0, done_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The subscriber's socket while it waits for messages (shut down to stop it).
  int subscriber_fd_ ABSL_GUARDED_BY(mu_) = -1;
  RedisTierStats counters_ ABSL_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_log_ ABSL_GUARDED_BY(mu_) {};
  int64_t unlogged_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread writer_, subscriber_;
};

}  // namespace kvgate::cache
