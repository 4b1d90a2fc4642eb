// The Redis tier's calls on the reader connection: get and get_many (pipelined GETs), contains, drop_corrupt, put_raw_for_test.
#include <hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <string>
#include <vector>
#include <utility>

#include "cache/tiers/redis_connection.h"
#include "cache/tiers/redis_tier.h"
#include "cache/tiers/redis_tier_internal.h"

namespace kvgate::cache {
namespace {

// SIGPIPE blocked around a command on a caller's thread (redis_tier_internal.h).
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

}  // namespace

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
  enum class Outcome : uint8_t { kFailed, kHit, kNil, kUnsealed };
  std::vector<Reply> out(keys.size());
  std::vector<Outcome> outcome(keys.size(), Outcome::kFailed);
  std::vector<TierKey> tags(keys.size());
  std::vector<std::string> names(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) names[i] = name_of_tags(tags[i] = tags_of(keys[i]));
  std::string error;
  {
    MutexLock r(read_mu_);
    const NoSigpipe no_sigpipe;
    if (redisContext* c = reader_->get()) {
      for (const std::string& name : names) {
        const char* argv[] = {"GET", name.data()};
        const size_t len[] = {3, name.size()};
        redisAppendCommandArgv(c, 2, argv, len);
      }
      std::vector<size_t> forged;
      for (size_t i = 0; i < keys.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) break;
        const ReplyPtr reply(static_cast<redisReply*>(raw));
        if (reply->type == REDIS_REPLY_STRING) {
          const auto* b = reinterpret_cast<const std::byte*>(reply->str);
          out[i] = seal_->open({b, reply->len}, names[i]);
          outcome[i] = out[i] ? Outcome::kHit : Outcome::kUnsealed;
          if (!out[i]) forged.push_back(i);
        } else if (reply->type == REDIS_REPLY_NIL) {
          outcome[i] = Outcome::kNil;
        } else {
          error = reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply to GET";  // LOADING, ...
        }
      }
      // What does not open is deleted, best effort (the next reader finds it otherwise).
      for (const size_t i : forged) {
        if (c->err) break;
        const char* argv[] = {"DEL", names[i].data()};
        const size_t len[] = {3, names[i].size()};
        const ReplyPtr reply{static_cast<redisReply*>(redisCommandArgv(c, 2, argv, len))};
      }
      if (c->err) {
        error = c->errstr;
        reader_->failed();
      }
    } else {
      error = "not connected (" + reader_->last_error() + ")";
    }
  }
  int64_t failed = 0, unsealed = 0;
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (outcome[i] == Outcome::kHit) {
        known_.add(tags[i]);
        ++counters_.tier.hits;
        continue;
      }
      ++counters_.tier.misses;
      if (outcome[i] == Outcome::kNil || outcome[i] == Outcome::kUnsealed) {
        known_.erase(tags[i]);  // evicted, expired or deleted since we learnt of it; or not ours
        if (outcome[i] == Outcome::kUnsealed) ++unsealed;
      } else {
        ++counters_.read_errors;
        ++failed;
      }
    }
    counters_.unsealed += unsealed;
    if (unsealed > 0) counters_.tier.faults["unsealed"] += unsealed;
  }
  if (failed > 0) log_throttled("reading " + std::to_string(failed) + " blocks failed (misses): " + error);
  if (unsealed > 0)
    log_throttled(std::to_string(unsealed) +
                  " values did not open under the cluster key (planted, altered, or under a key this replica "
                  "does not hold): misses, deleted");
  return out;
}

// The tags are HMACs: computed before the lock, which every reader and the
// writer share.
bool RedisTier::contains(const TierKey& key) const {
  const TierKey tags = tags_of(key);
  MutexLock lock(mu_);
  return queued_.contains(key) || known_.contains(tags);
}

void RedisTier::drop_corrupt(const TierKey& key, RecordFault why) {
  const TierKey tags = tags_of(key);
  {
    MutexLock lock(mu_);
    ++counters_.tier.faults[std::string(fault_name(why))];
    known_.erase(tags);
    queued_.erase(key);  // still queued: never written (the writer skips it)
  }
  const std::string k = name_of_tags(tags);
  const char* argv[] = {"DEL", k.data()};
  const size_t len[] = {3, k.size()};
  MutexLock r(read_mu_);
  const NoSigpipe no_sigpipe;
  if (redisContext* c = reader_->get()) {
    // Best effort: a bad record left behind is caught again by the next reader.
    if (ReplyPtr reply{static_cast<redisReply*>(redisCommandArgv(c, 2, argv, len))}; !reply) reader_->failed();
  }
}

int64_t RedisTier::evict_scope(const ScopeId& scope) {
  flush();  // a record still queued would land after the scan
  const std::string pattern = scope_names(scope) + '*';
  std::string cursor = "0";
  int64_t deleted = 0;
  bool ok = true;
  MutexLock r(read_mu_);
  const NoSigpipe no_sigpipe;
  redisContext* c = reader_->get();
  if (!c) return -1;
  do {
    const ReplyPtr page = detail::scan_page(c, cursor, pattern);
    if (!page) {
      ok = false;
      break;
    }
    const redisReply* keys = page->element[1];
    std::vector<const char*> argv_del{"DEL"};
    std::vector<size_t> len_del{3};
    std::vector<TierKey> gone;
    for (size_t i = 0; i < keys->elements; ++i) {
      if (keys->element[i]->type != REDIS_REPLY_STRING) continue;
      argv_del.push_back(keys->element[i]->str);
      len_del.push_back(keys->element[i]->len);
      if (const std::optional<TierKey> k = parse_key({keys->element[i]->str, keys->element[i]->len})) gone.push_back(*k);
    }
    if (argv_del.size() == 1) continue;
    const ReplyPtr del{static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(argv_del.size()), argv_del.data(), len_del.data()))};
    if (!del || del->type != REDIS_REPLY_INTEGER) {
      ok = false;
      break;
    }
    deleted += del->integer;
    MutexLock lock(mu_);
    for (const TierKey& k : gone) known_.erase(k);
  } while (cursor != "0");
  if (!ok) reader_->failed();
  return ok ? deleted : -1;
}

bool RedisTier::put_raw_for_test(const TierKey& key, std::span<const std::byte> value, bool sealed) {
  const TierKey tags = tags_of(key);
  const std::string k = name_of_tags(tags);
  const std::vector<std::byte> stored = sealed ? seal_->seal(value, k) : std::vector<std::byte>(value.begin(), value.end());
  const char* argv[] = {"SET", k.data(), reinterpret_cast<const char*>(stored.data())};
  const size_t len[] = {3, k.size(), stored.size()};
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
    known_.add(tags);
  }
  return ok;
}

}  // namespace kvgate::cache
