// The Redis tier's known keys: the bounded set, the subscriber thread that learns other replicas' writes, and the SCAN at each connect.
#include <hiredis.h>

#include <optional>
#include <string>
#include <string_view>

#include "cache/tiers/redis_connection.h"
#include "cache/tiers/redis_tier.h"
#include "cache/tiers/redis_tier_internal.h"

namespace kvgate::cache {
namespace {

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

void RedisTier::KnownKeys::add(const TierKey& k) {
  if (young_.contains(k)) return;
  old_.erase(k);
  young_.insert(k);
  if (young_.size() >= half_) {
    old_ = std::move(young_);
    young_.clear();
  }
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
    const ReplyPtr page = detail::scan_page(c, cursor, pattern);
    if (!page) {
      ok = false;
      break;
    }
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

}  // namespace kvgate::cache
