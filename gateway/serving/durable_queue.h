// DurableQueue: the threads that wait on fsync so nobody else does. A
// finished request's ledger write (Tenancy::finish, a synced RocksDB write)
// is posted here from the engine loop, which must never block; the job then
// sends the request's last frame, so a client sees its usage only once the
// record is durable (DESIGN "Durable writes off the I/O threads").
//
// Several threads, because the ledger's group commit lets concurrent writers
// share one sync. Destruction runs every job already posted, then joins.
//
// Thread ownership: post() from any thread; jobs run on the queue's threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace kvgate::serving {

class DurableQueue {
 public:
  explicit DurableQueue(int threads = 2);
  ~DurableQueue();
  DurableQueue(const DurableQueue&) = delete;
  DurableQueue& operator=(const DurableQueue&) = delete;

  // A job must not throw (it reports its own failures).
  void post(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void run() ABSL_LOCKS_EXCLUDED(mu_);

  Mutex mu_;
  CondVar wake_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: started once the rest exists
};

}  // namespace kvgate::serving
