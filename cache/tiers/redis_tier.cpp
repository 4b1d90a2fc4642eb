// The Redis tier's construction and teardown, its key names, stats and throttled logging.
//
// The tier's connections (redis_connection.h): the reader's (get,
// drop_corrupt), the writer thread's (SET and PUBLISH, pipelined) and the
// subscriber thread's two (the channel that announces other replicas'
// writes, and a SCAN at each connect). Each is a blocking hiredis context
// with a timeout, closed on the first failure and reopened no sooner than its
// backoff allows.
#include "cache/tiers/redis_tier.h"

#include <sys/socket.h>

#include <array>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>

#include "cache/tiers/redis_connection.h"
#include "cache/tiers/redis_tier_internal.h"

namespace kvgate::cache {
namespace {

void append_hex(std::string& out, const Hash128& h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, h.hi, h.lo);
  out.append(buf, 32);
}

// Version 2: sealed values under keyed names (version 1 was plain records
// under the scope and hash in hex; its keys are never read).
std::string key_prefix(const KvIdentity& id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "kvgate:kv:2:%016" PRIx64 ":", identity_digest(id));
  return buf;
}

template <size_t N>
void put(std::array<std::byte, N>& out, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) out[at + i] = std::byte(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

// Scope tag: 's', the identity digest, the scope. Block tag: 'b', the
// same, the chain hash. The identity is in both, so no tag means anything
// under another model.
Hash128 RedisTier::scope_tag(const ScopeId& scope) const {
  std::array<std::byte, 1 + 8 + 16> in{};
  in[0] = std::byte{'s'};
  put(in, 1, identity_digest_);
  put(in, 9, scope.lo);
  put(in, 17, scope.hi);
  return seal_->tag(in);
}

TierKey RedisTier::tags_of(const TierKey& key) const {
  std::array<std::byte, 1 + 8 + 16 + 16> in{};
  in[0] = std::byte{'b'};
  put(in, 1, identity_digest_);
  put(in, 9, key.scope.lo);
  put(in, 17, key.scope.hi);
  put(in, 25, key.hash.lo);
  put(in, 33, key.hash.hi);
  return {scope_tag(key.scope), seal_->tag(in)};
}

std::string RedisTier::record_name(const TierKey& key) const { return name_of_tags(tags_of(key)); }

std::string RedisTier::scope_names(const ScopeId& scope) const {
  std::string out = key_prefix_;
  append_hex(out, scope_tag(scope));
  out += ':';
  return out;
}

std::string RedisTier::name_of_tags(const TierKey& tags) const {
  std::string out = key_prefix_;
  append_hex(out, tags.scope);
  out += ':';
  append_hex(out, tags.hash);
  return out;
}

std::string redis_written_channel(const KvIdentity& id) { return key_prefix(id) + "written"; }

RedisTier::RedisTier(RedisTierOptions o)
    : identity_(o.identity),
      seal_(o.seal),
      identity_digest_(identity_digest(o.identity)),
      address_(o.host + ":" + std::to_string(o.port)),
      key_prefix_(key_prefix(o.identity)),
      channel_(redis_written_channel(o.identity)),
      ttl_(o.ttl),
      write_queue_bytes_(o.write_queue_bytes),
      known_capacity_(o.known_keys),
      reader_(std::make_unique<detail::RedisConnection>(o.host, o.port, o.user, o.password, o.timeout, o.reconnect_min, o.reconnect_max)),
      writer_conn_(
          std::make_unique<detail::RedisConnection>(o.host, o.port, o.user, o.password, o.timeout, o.reconnect_min, o.reconnect_max)),
      subscriber_conn_(
          std::make_unique<detail::RedisConnection>(o.host, o.port, o.user, o.password, o.timeout, o.reconnect_min, o.reconnect_max)),
      scan_conn_(std::make_unique<detail::RedisConnection>(o.host, o.port, o.user, o.password, o.timeout, o.reconnect_min, o.reconnect_max)),
      known_(o.known_keys) {
  if (!identity_.valid()) throw std::invalid_argument("kv redis tier: invalid KV identity");
  if (!seal_) throw std::invalid_argument("kv redis tier: no cluster key (kv_tiers.redis_key_file)");
  if (o.host.empty()) throw std::invalid_argument("kv redis tier: no host");
  if (o.port < 1 || o.port > 65535)
    throw std::invalid_argument("kv redis tier: port " + std::to_string(o.port) + " is outside 1..65535");
  {
    MutexLock r(read_mu_);
    reader_->get();  // one attempt now, so that stats() and the start-up line say whether Redis answers
  }
  writer_ = std::thread([this] { writer_loop(); });
  subscriber_ = std::thread([this] { subscriber_loop(); });
}

RedisTier::~RedisTier() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    if (subscriber_fd_ >= 0) ::shutdown(subscriber_fd_, SHUT_RDWR);  // wakes its blocking read
  }
  work_cv_.notify_all();
  stop_cv_.notify_all();
  writer_.join();
  subscriber_.join();
}

// --- Stats and logging ------------------------------------------------------

RedisTierStats RedisTier::stats() const {
  MutexLock lock(mu_);
  RedisTierStats s = counters_;
  s.tier.blocks = static_cast<int64_t>(known_.size());
  s.tier.queued = static_cast<int64_t>(fifo_.size());
  s.tier.queued_bytes = static_cast<int64_t>(queued_bytes_);
  s.connects =
      reader_status().connects() + writer_conn_->connects() + subscriber_conn_->connects() + scan_conn_->connects();
  using State = detail::RedisConnection::State;
  s.connected = reader_status().state() == State::kUp && writer_conn_->state() != State::kDown;
  return s;
}

const detail::RedisConnection& RedisTier::reader_status() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return *reader_; }

// At most one line per 10 s (a dead Redis would otherwise log every read);
// every failure is counted in stats() either way.
void RedisTier::log_throttled(const std::string& what) {
  MutexLock lock(mu_);
  const auto now = Clock::now();
  if (last_log_ != Clock::time_point{} && now - last_log_ < std::chrono::seconds(10)) {
    ++unlogged_;
    return;
  }
  const std::string since =
      unlogged_ > 0 ? " (" + std::to_string(unlogged_) + " more problems since the last line)" : std::string();
  std::fprintf(stderr, "kvgate: kv redis tier at %s: %s%s\n", address_.c_str(), what.c_str(), since.c_str());
  last_log_ = now;
  unlogged_ = 0;
}

}  // namespace kvgate::cache
