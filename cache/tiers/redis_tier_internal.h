// What the Redis tier's files share: the clock, hiredis replies' ownership, and keeping SIGPIPE off our threads.
#pragma once

#include <hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>

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

// One SCAN page of `pattern` from `cursor`: the next cursor (updated in
// place; "0" after the last page) and the page's keys (the reply's
// element[1], an array; each key a string). Nothing on a failed or
// unexpected reply.
inline ReplyPtr scan_page(redisContext* c, std::string& cursor, const std::string& pattern) {
  const char* argv[] = {"SCAN", cursor.data(), "MATCH", pattern.data(), "COUNT", "1000"};
  const size_t len[] = {4, cursor.size(), 5, pattern.size(), 5, 4};
  ReplyPtr page{static_cast<redisReply*>(redisCommandArgv(c, 6, argv, len))};
  if (!page || page->type != REDIS_REPLY_ARRAY || page->elements != 2 || page->element[0]->type != REDIS_REPLY_STRING ||
      page->element[1]->type != REDIS_REPLY_ARRAY)
    return nullptr;
  cursor.assign(page->element[0]->str, page->element[0]->len);
  return page;
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::block_sigpipe;
using detail::ReplyPtr;

}  // namespace

}  // namespace kvgate::cache
