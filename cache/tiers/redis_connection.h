// RedisConnection: one blocking hiredis context and its reconnect backoff, for the Redis tier's threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

struct redisContext;  // hiredis.h

namespace kvgate::cache::detail {

// One blocking hiredis context. get() connects when there is none and the
// backoff allows; failed() closes it and doubles the backoff (with ±25%
// jitter), so a dead server costs one connect attempt per backoff, never one
// per call. Used by one thread at a time; state() is for any thread.
class RedisConnection {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State : uint8_t { kNever, kUp, kDown };

  // `password` set: each connection sends AUTH (with `user`, when set)
  // before it is used, otherwise a PING; a refusal is a failed connect.
  RedisConnection(std::string host, int port, std::string user, std::string password, std::chrono::milliseconds timeout,
                  std::chrono::milliseconds min, std::chrono::milliseconds max)
      : host_(std::move(host)), port_(port), user_(std::move(user)), password_(std::move(password)), timeout_(timeout),
        min_(min), max_(max), backoff_(min), rng_(std::random_device{}()) {}
  ~RedisConnection() { close(); }

  // The context, connected now if need be; null while the backoff runs or
  // the connection failed (last_error() says why).
  redisContext* get();
  // The last command failed on the context (I/O error, timeout, EOF).
  void failed();
  void close();
  Clock::time_point next_try() const { return next_try_; }
  const std::string& last_error() const { return error_; }
  State state() const { return state_; }
  int64_t connects() const { return connects_; }

 private:
  void back_off();

  bool authenticate(redisContext* c);

  const std::string host_;
  const int port_;
  const std::string user_, password_;
  const std::chrono::milliseconds timeout_, min_, max_;
  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
  redisContext* ctx_ = nullptr;
  Clock::time_point next_try_{};
  std::string error_;
  std::atomic<State> state_{State::kNever};
  std::atomic<int64_t> connects_{0};
};

}  // namespace kvgate::cache::detail
