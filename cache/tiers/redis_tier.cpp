// The Redis tier's three connections: the reader's (get, drop_corrupt), the
// writer thread's (SET and PUBLISH, pipelined) and the subscriber thread's
// (the channel that announces other replicas' writes, and a SCAN at each
// connect). Each is a blocking hiredis context with a timeout, closed on
// the first failure and reopened no sooner than its backoff allows.
#include "cache/tiers/redis_tier.h"

#include <hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace kvgate::cache {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBatchRecords = 64;             // records per pipeline
constexpr size_t kBatchBytes = size_t{4} << 20;  // or fewer, past this many bytes
constexpr const char* kScanPageKeys = "1000";    // SCAN's COUNT hint

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

timeval to_timeval(std::chrono::milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

void append_hex(std::string& out, const Hash128& h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, h.hi, h.lo);
  out.append(buf, 32);
}

std::string key_prefix(const KvIdentity& id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "kvgate:kv:1:%016" PRIx64 ":", identity_digest(id));
  return buf;
}

// hiredis writes with write(2), which raises SIGPIPE on a connection the
// server has closed: the default action would kill the process. Our own
// threads block SIGPIPE for good (block_sigpipe); on a caller's thread the
// signal is blocked around the command and one it raised is consumed before
// the mask is restored, so the process's disposition is never changed.
void block_sigpipe() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

bool parse_hex64(std::string_view s, uint64_t* out) {
  uint64_t v = 0;
  for (const char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return s.size() == 16;
}

bool parse_hash(std::string_view s, Hash128* out) {
  return s.size() == 32 && parse_hex64(s.substr(0, 16), &out->hi) && parse_hex64(s.substr(16), &out->lo);
}

}  // namespace

namespace detail {

// One blocking hiredis context. get() connects when there is none and the
// backoff allows; failed() closes it and doubles the backoff (with ±25%
// jitter), so a dead server costs one connect attempt per backoff, never one
// per call. Used by one thread at a time; state() is for any thread.
class RedisConnection {
 public:
  enum class State : uint8_t { kNever, kUp, kDown };

  RedisConnection(std::string host, int port, std::chrono::milliseconds timeout, std::chrono::milliseconds min,
                  std::chrono::milliseconds max)
      : host_(std::move(host)), port_(port), timeout_(timeout), min_(min), max_(max), backoff_(min),
        rng_(std::random_device{}()) {}
  ~RedisConnection() { close(); }

  // The context, connected now if need be; null while the backoff runs or
  // the connection failed (last_error() says why).
  redisContext* get() {
    if (ctx_) return ctx_;
    if (Clock::now() < next_try_) return nullptr;
    redisContext* c = redisConnectWithTimeout(host_.c_str(), port_, to_timeval(timeout_));
    if (!c || c->err) {
      error_ = c ? c->errstr : "out of memory";
      if (c) redisFree(c);
      back_off();
      return nullptr;
    }
    redisSetTimeout(c, to_timeval(timeout_));
    redisEnableKeepAlive(c);
    ctx_ = c;
    backoff_ = min_;
    state_ = State::kUp;
    ++connects_;
    return ctx_;
  }
  // The last command failed on the context (I/O error, timeout, EOF).
  void failed() {
    if (ctx_) error_ = ctx_->err ? ctx_->errstr : "unexpected reply";
    close();
    back_off();
  }
  void close() {
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
  }
  Clock::time_point next_try() const { return next_try_; }
  const std::string& last_error() const { return error_; }
  State state() const { return state_; }
  int64_t connects() const { return connects_; }

 private:
  void back_off() {
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    next_try_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(backoff_ * jitter(rng_));
    backoff_ = std::min(backoff_ * 2, max_);
    state_ = State::kDown;
  }

  const std::string host_;
  const int port_;
  const std::chrono::milliseconds timeout_, min_, max_;
  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
  redisContext* ctx_ = nullptr;
  Clock::time_point next_try_{};
  std::string error_;
  std::atomic<State> state_{State::kNever};
  std::atomic<int64_t> connects_{0};
};

}  // namespace detail

std::string redis_record_key(const KvIdentity& id, const TierKey& key) {
  std::string out = key_prefix(id);
  append_hex(out, key.scope);
  out += ':';
  append_hex(out, key.hash);
  return out;
}

std::string redis_written_channel(const KvIdentity& id) { return key_prefix(id) + "written"; }

void RedisTier::KnownKeys::add(const TierKey& k) {
  if (young_.contains(k)) return;
  old_.erase(k);
  young_.insert(k);
  if (young_.size() >= half_) {
    old_ = std::move(young_);
    young_.clear();
  }
}

RedisTier::RedisTier(RedisTierOptions o)
    : identity_(o.identity),
      address_(o.host + ":" + std::to_string(o.port)),
      key_prefix_(key_prefix(o.identity)),
      channel_(redis_written_channel(o.identity)),
      ttl_(o.ttl),
      write_queue_bytes_(o.write_queue_bytes),
      known_capacity_(o.known_keys),
      reader_(std::make_unique<detail::RedisConnection>(o.host, o.port, o.timeout, o.reconnect_min, o.reconnect_max)),
      writer_conn_(
          std::make_unique<detail::RedisConnection>(o.host, o.port, o.timeout, o.reconnect_min, o.reconnect_max)),
      subscriber_conn_(
          std::make_unique<detail::RedisConnection>(o.host, o.port, o.timeout, o.reconnect_min, o.reconnect_max)),
      scan_conn_(std::make_unique<detail::RedisConnection>(o.host, o.port, o.timeout, o.reconnect_min, o.reconnect_max)),
      known_(o.known_keys) {
  if (!identity_.valid()) throw std::invalid_argument("kv redis tier: invalid KV identity");
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

// --- Writes -----------------------------------------------------------------

bool RedisTier::enqueue(std::span<const std::byte> record, TenantId) {
  const std::optional<RecordHeader> h = read_record_header(record);
  bool full = false;
  {
    MutexLock lock(mu_);
    if (!h || h->identity != identity_) {
      ++counters_.tier.refused;
      return false;
    }
    const TierKey key{h->key.scope, h->key.hash};
    if (known_.contains(key) || queued_.contains(key)) return false;
    full = !fifo_.empty() && queued_bytes_ + record.size() > write_queue_bytes_;
    if (full) {
      ++counters_.tier.refused;
    } else {
      auto p = std::make_shared<const Pending>(Pending{key, {record.begin(), record.end()}});
      queued_.emplace(key, p);
      fifo_.push_back(std::move(p));
      queued_bytes_ += record.size();
      ++enqueued_seq_;
      ++counters_.tier.stored;
    }
  }
  if (full) {
    log_throttled("write queue full (" + std::to_string(write_queue_bytes_ >> 10) + " KiB): a block was refused");
    return false;
  }
  work_cv_.notify_one();
  return true;
}

void RedisTier::writer_loop() {
  block_sigpipe();
  writer_conn_->get();  // connect early: stats() then says whether the writer can reach Redis
  MutexLock lock(mu_);
  for (;;) {
    while (!stop_ && fifo_.empty()) work_cv_.wait(mu_);
    if (fifo_.empty()) return;  // stopping, and everything queued was sent
    std::vector<std::shared_ptr<const Pending>> batch;
    size_t bytes = 0;
    uint64_t taken = 0;
    while (!fifo_.empty() && batch.size() < kBatchRecords && bytes < kBatchBytes) {
      std::shared_ptr<const Pending> p = std::move(fifo_.front());
      fifo_.pop_front();
      ++taken;
      bytes += p->record.size();
      const auto it = queued_.find(p->key);
      if (it != queued_.end() && it->second == p) batch.push_back(std::move(p));  // else dropped as corrupt
    }
    {
      MutexUnlock unlocked(mu_);
      if (!batch.empty()) write_batch(batch);
    }
    for (const auto& p : batch)
      if (const auto it = queued_.find(p->key); it != queued_.end() && it->second == p) queued_.erase(it);
    queued_bytes_ -= bytes;
    done_seq_ += taken;
    done_cv_.notify_all();
  }
}

// SET (PX ttl) and PUBLISH for each record in one pipeline, then every
// reply: one round trip per batch. A connection that fails mid-way loses
// the records whose SET was not acknowledged (counted refused).
void RedisTier::write_batch(const std::vector<std::shared_ptr<const Pending>>& batch) {
  std::vector<TierKey> written;
  int64_t errors = 0;
  std::string error;
  if (redisContext* c = writer_conn_->get()) {
    const std::string ttl_ms = std::to_string(ttl_.count());
    for (const auto& p : batch) {
      const std::string key = redis_record_key(identity_, p->key);
      const char* set[] = {"SET", key.data(), reinterpret_cast<const char*>(p->record.data()), "PX", ttl_ms.data()};
      const size_t set_len[] = {3, key.size(), p->record.size(), 2, ttl_ms.size()};
      redisAppendCommandArgv(c, ttl_.count() > 0 ? 5 : 3, set, set_len);
      const char* pub[] = {"PUBLISH", channel_.data(), key.data()};
      const size_t pub_len[] = {7, channel_.size(), key.size()};
      redisAppendCommandArgv(c, 3, pub, pub_len);
    }
    for (const auto& p : batch) {
      void* set_reply = nullptr;
      void* pub_reply = nullptr;
      if (redisGetReply(c, &set_reply) != REDIS_OK) break;
      const ReplyPtr set(static_cast<redisReply*>(set_reply));
      if (set->type == REDIS_REPLY_STATUS) {
        written.push_back(p->key);
      } else {
        ++errors;  // OOM under noeviction, a READONLY replica, ...
        error = set->type == REDIS_REPLY_ERROR ? set->str : "unexpected reply to SET";
      }
      if (redisGetReply(c, &pub_reply) != REDIS_OK) break;
      freeReplyObject(pub_reply);
    }
    if (c->err) {
      ++errors;
      error = c->errstr;
      writer_conn_->failed();
    }
  } else {
    ++errors;
    error = "not connected (" + writer_conn_->last_error() + ")";
  }
  {
    MutexLock lock(mu_);
    for (const TierKey& k : written) known_.add(k);
    counters_.tier.persisted += static_cast<int64_t>(written.size());
    counters_.tier.refused += static_cast<int64_t>(batch.size() - written.size());
    counters_.tier.write_errors += errors;
  }
  if (errors > 0)
    log_throttled("writing " + std::to_string(batch.size()) + " blocks failed: " + error + "; " +
                  std::to_string(batch.size() - written.size()) + " dropped");
}

void RedisTier::flush() {
  MutexLock lock(mu_);
  const uint64_t upto = enqueued_seq_;
  while (done_seq_ < upto) done_cv_.wait(mu_);
}

// --- Reads ------------------------------------------------------------------

std::optional<std::vector<std::byte>> RedisTier::get(const TierKey& key) {
  return std::move(get_many(std::span(&key, 1)).front());
}

std::vector<RedisTier::Reply> RedisTier::get_many(std::span<const TierKey> keys, const OnRead& on_read) {
  std::vector<Reply> out(keys.size());
  std::vector<TierKey> remote;
  std::vector<size_t> where;
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (const auto it = queued_.find(keys[i]); it != queued_.end()) {
        out[i] = it->second->record;
        ++counters_.tier.hits;
      } else {
        remote.push_back(keys[i]);
        where.push_back(i);
      }
    }
  }
  if (!remote.empty()) {
    std::vector<Reply> got = read(remote);
    for (size_t j = 0; j < remote.size(); ++j) out[where[j]] = std::move(got[j]);
  }
  // One connection, one pipeline: the records are told in order, on this thread.
  if (on_read)
    for (size_t i = 0; i < out.size(); ++i) on_read(i, out[i]);
  return out;
}

std::vector<RedisTier::Reply> RedisTier::read(std::span<const TierKey> keys) {
  enum class Outcome : uint8_t { kFailed, kHit, kNil };
  std::vector<Reply> out(keys.size());
  std::vector<Outcome> outcome(keys.size(), Outcome::kFailed);
  std::string error;
  {
    MutexLock r(read_mu_);
    const NoSigpipe no_sigpipe;
    if (redisContext* c = reader_->get()) {
      for (const TierKey& k : keys) {
        const std::string key = redis_record_key(identity_, k);
        const char* argv[] = {"GET", key.data()};
        const size_t len[] = {3, key.size()};
        redisAppendCommandArgv(c, 2, argv, len);
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) break;
        const ReplyPtr reply(static_cast<redisReply*>(raw));
        if (reply->type == REDIS_REPLY_STRING) {
          const auto* b = reinterpret_cast<const std::byte*>(reply->str);
          out[i].emplace(b, b + reply->len);
          outcome[i] = Outcome::kHit;
        } else if (reply->type == REDIS_REPLY_NIL) {
          outcome[i] = Outcome::kNil;
        } else {
          error = reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply to GET";  // LOADING, ...
        }
      }
      if (c->err) {
        error = c->errstr;
        reader_->failed();
      }
    } else {
      error = "not connected (" + reader_->last_error() + ")";
    }
  }
  int64_t failed = 0;
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (outcome[i] == Outcome::kHit) {
        known_.add(keys[i]);
        ++counters_.tier.hits;
        continue;
      }
      ++counters_.tier.misses;
      if (outcome[i] == Outcome::kNil) {
        known_.erase(keys[i]);  // evicted, expired or deleted since we learnt of it
      } else {
        ++counters_.read_errors;
        ++failed;
      }
    }
  }
  if (failed > 0) log_throttled("reading " + std::to_string(failed) + " blocks failed (misses): " + error);
  return out;
}

bool RedisTier::contains(const TierKey& key) const {
  MutexLock lock(mu_);
  return known_.contains(key) || queued_.contains(key);
}

void RedisTier::drop_corrupt(const TierKey& key, RecordFault why) {
  {
    MutexLock lock(mu_);
    ++counters_.tier.faults[std::string(fault_name(why))];
    known_.erase(key);
    queued_.erase(key);  // still queued: never written (the writer skips it)
  }
  const std::string k = redis_record_key(identity_, key);
  const char* argv[] = {"DEL", k.data()};
  const size_t len[] = {3, k.size()};
  MutexLock r(read_mu_);
  const NoSigpipe no_sigpipe;
  if (redisContext* c = reader_->get()) {
    // Best effort: a bad record left behind is caught again by the next reader.
    if (ReplyPtr reply{static_cast<redisReply*>(redisCommandArgv(c, 2, argv, len))}; !reply) reader_->failed();
  }
}

bool RedisTier::put_raw_for_test(const TierKey& key, std::span<const std::byte> value) {
  const std::string k = redis_record_key(identity_, key);
  const char* argv[] = {"SET", k.data(), reinterpret_cast<const char*>(value.data())};
  const size_t len[] = {3, k.size(), value.size()};
  bool ok = false;
  {
    MutexLock r(read_mu_);
    const NoSigpipe no_sigpipe;
    if (redisContext* c = reader_->get()) {
      const ReplyPtr reply{static_cast<redisReply*>(redisCommandArgv(c, 3, argv, len))};
      if (!reply) reader_->failed();
      ok = reply && reply->type == REDIS_REPLY_STATUS;
    }
  }
  if (ok) {
    MutexLock lock(mu_);
    known_.add(key);
  }
  return ok;
}

// --- Learning what other replicas wrote -------------------------------------

void RedisTier::subscriber_loop() {
  block_sigpipe();
  MutexLock lock(mu_);
  while (!stop_) {
    {
      MutexUnlock unlocked(mu_);
      if (redisContext* c = subscriber_conn_->get()) {
        const char* argv[] = {"SUBSCRIBE", channel_.data()};
        const size_t len[] = {9, channel_.size()};
        const ReplyPtr ack{static_cast<redisReply*>(redisCommandArgv(c, 2, argv, len))};
        if (ack && ack->type == REDIS_REPLY_ARRAY) {
          redisSetTimeout(c, timeval{0, 0});  // messages may be minutes apart; TCP keepalive notices a dead peer
          bool stopping;
          {
            MutexLock l(mu_);
            if (!stop_) subscriber_fd_ = c->fd;
            stopping = stop_;
          }
          // Subscribed first, then scanned: a key written meanwhile is announced or scanned, or both.
          if (!stopping && scan_known()) {
            void* raw = nullptr;
            while (redisGetReply(c, &raw) == REDIS_OK) {
              const ReplyPtr msg(static_cast<redisReply*>(raw));
              if (msg->type != REDIS_REPLY_ARRAY || msg->elements != 3 || msg->element[2]->type != REDIS_REPLY_STRING)
                continue;
              if (const std::optional<TierKey> k = parse_key({msg->element[2]->str, msg->element[2]->len})) {
                MutexLock l(mu_);
                known_.add(*k);
              }
            }
          }
          MutexLock l(mu_);
          subscriber_fd_ = -1;
        }
        subscriber_conn_->failed();
      }
    }
    const Clock::time_point retry = subscriber_conn_->next_try();
    while (!stop_)
      if (!stop_cv_.wait_until(mu_, retry)) break;
  }
}

bool RedisTier::scan_known() {
  redisContext* c = scan_conn_->get();
  if (!c) return false;
  const std::string pattern = key_prefix_ + "*";
  std::string cursor = "0";
  size_t added = 0;
  bool ok = true;
  do {
    {
      MutexLock lock(mu_);
      if (stop_) break;
    }
    const char* argv[] = {"SCAN", cursor.data(), "MATCH", pattern.data(), "COUNT", kScanPageKeys};
    const size_t len[] = {4, cursor.size(), 5, pattern.size(), 5, std::char_traits<char>::length(kScanPageKeys)};
    const ReplyPtr page{static_cast<redisReply*>(redisCommandArgv(c, 6, argv, len))};
    if (!page || page->type != REDIS_REPLY_ARRAY || page->elements != 2 ||
        page->element[0]->type != REDIS_REPLY_STRING || page->element[1]->type != REDIS_REPLY_ARRAY) {
      ok = false;
      break;
    }
    cursor.assign(page->element[0]->str, page->element[0]->len);
    const redisReply* keys = page->element[1];
    MutexLock lock(mu_);
    for (size_t i = 0; i < keys->elements; ++i) {
      if (keys->element[i]->type != REDIS_REPLY_STRING) continue;
      if (const std::optional<TierKey> k = parse_key({keys->element[i]->str, keys->element[i]->len})) {
        known_.add(*k);
        ++added;
      }
    }
  } while (cursor != "0" && added < known_capacity_);
  if (ok) {
    scan_conn_->close();  // idle until the next reconnect
  } else {
    scan_conn_->failed();
  }
  return ok;
}

std::optional<TierKey> RedisTier::parse_key(std::string_view text) const {
  if (text.size() != key_prefix_.size() + 65 || !text.starts_with(key_prefix_) || text[key_prefix_.size() + 32] != ':')
    return std::nullopt;
  TierKey k;
  text.remove_prefix(key_prefix_.size());
  if (!parse_hash(text.substr(0, 32), &k.scope) || !parse_hash(text.substr(33), &k.hash)) return std::nullopt;
  return k;
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
