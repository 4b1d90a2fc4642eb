// RedisConnection's connect, failure and backoff (redis_connection.h), on hiredis.
#include "cache/tiers/redis_connection.h"

#include <hiredis.h>
#include <sys/time.h>

#include <algorithm>

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
  ctx_ = c;
  backoff_ = min_;
  state_ = State::kUp;
  ++connects_;
  return ctx_;
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
