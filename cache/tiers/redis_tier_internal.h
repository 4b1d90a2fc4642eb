// What the Redis tier's files share: the clock, hiredis replies' ownership, and keeping SIGPIPE off our threads.
#pragma once

#include <hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <memory>

namespace kvgate::cache {

namespace detail {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// hiredis writes with write(2), which raises SIGPIPE on a connection the
// server has closed: the default action would kill the process. Our own
// threads block SIGPIPE for good (block_sigpipe); on a caller's thread the
// signal is blocked around the command and one it raised is consumed before
// the mask is restored (NoSigpipe, redis_tier_reads.cpp), so the process's
// disposition is never changed.
inline void block_sigpipe() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::block_sigpipe;
using detail::ReplyPtr;

}  // namespace

}  // namespace kvgate::cache
