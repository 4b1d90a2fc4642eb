// RedisConnection's connect, failure and backoff (redis_connection.h), on hiredis.
#include "cache/tiers/redis_connection.h"

#include <hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kvgate::cache::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

}  // namespace

redisContext* RedisConnection::get() {
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
  if (!authenticate(c)) {
    redisFree(c);
    back_off();
    return nullptr;
  }
  ctx_ = c;
  backoff_ = min_;
  state_ = State::kUp;
  ++connects_;
  return ctx_;
}

// AUTH with the password, or without one a PING: either way a Redis that
// will not serve this connection (a password it wants, a wrong one) is a
// failed connect, with its reply as the reason, never a connection that
// answers every command with an error.
bool RedisConnection::authenticate(redisContext* c) {
  std::vector<const char*> argv{"PING"};
  std::vector<size_t> len{4};
  if (!password_.empty()) {
    argv = {"AUTH"};
    len = {4};
    if (!user_.empty()) argv.push_back(user_.data()), len.push_back(user_.size());
    argv.push_back(password_.data()), len.push_back(password_.size());
  }
  auto* reply = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), len.data()));
  const bool ok = reply && reply->type == REDIS_REPLY_STATUS;
  // The reply's text, never the password: WRONGPASS, NOAUTH.
  const std::string what = password_.empty() ? "PING" : "AUTH";
  error_ = ok ? "" : reply && reply->type == REDIS_REPLY_ERROR ? what + " refused: " + reply->str
                                                               : what + " failed: " + (c->err ? c->errstr : "no reply");
  if (reply) freeReplyObject(reply);
  return ok;
}

void RedisConnection::failed() {
  if (ctx_) error_ = ctx_->err ? ctx_->errstr : "unexpected reply";
  close();
  back_off();
}

void RedisConnection::close() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
}

void RedisConnection::back_off() {
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  next_try_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(backoff_ * jitter(rng_));
  backoff_ = std::min(backoff_ * 2, max_);
  state_ = State::kDown;
}

}  // namespace kvgate::cache::detail
