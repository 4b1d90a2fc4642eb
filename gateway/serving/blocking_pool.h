// BlockingPool: the threads for work that may block, so that neither the
// I/O threads nor the engine loop ever do (Tokio's spawn_blocking pool).
// What runs here: a finished request's ledger write (Tenancy::finish, a
// synced RocksDB write), posted from the engine loop, which then sends the
// request's last frame, so a client sees its usage only once the record is
// durable (DESIGN "Durable writes off the I/O threads"); the admin routes'
// tenancy writes; a /metrics or dashboard scrape, which waits for a step
// boundary.
//
// Several threads, because the ledger's group commit lets concurrent writers
// share one sync. Destruction runs every job already posted, then joins.
//
// Thread ownership: post() from any thread; jobs run on the pool's threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace kvgate::serving {

class BlockingPool {
 public:
  explicit BlockingPool(int threads = 2);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

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
