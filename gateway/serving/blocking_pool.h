// BlockingPool: the threads for work that may block, so that neither the
// I/O threads nor the engine loop ever do (Tokio's spawn_blocking pool).
// A server keeps three, so that no kind of work waits behind another:
//
//   billing   a finished request's ledger write (Tenancy::finish, a synced
//             RocksDB write), posted from the engine loop, which then sends
//             the request's last frame, so a client sees its usage only once
//             the record is durable (DESIGN "Durable writes off the I/O
//             threads"). Nothing else runs there. Unbounded here, because a
//             record is never refused: its jobs are bounded by the requests
//             admitted (one each), which the engine's max_outstanding bounds.
//   admin     the admin routes (tenancy writes, backups, the engine's
//             control), bounded: past `capacity` queued, try_post refuses
//             and the route answers 503 (json_reply.h's send_shed).
//   side      everything else a client can ask for that blocks: /metrics
//             and /dashboard/data scrapes, a tenant's /v1/usage (a scan of
//             its ledger records) and its deleting a stored response;
//             bounded the same way.
//
// Several billing threads, because the ledger's group commit lets concurrent
// writers share one sync. Destruction runs every job already posted, then joins.
//
// Thread ownership: post() and try_post() from any thread; jobs run on the
// pool's threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace kvgate::serving {

class BlockingPool {
 public:
  // `capacity`: jobs queued (not yet running) beyond which try_post()
  // refuses; 0 = no bound.
  explicit BlockingPool(int threads = 2, size_t capacity = 0);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // A job must not throw (it reports its own failures).
  void post(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);
  // post(), unless `capacity` jobs are already queued: then false, and the
  // caller answers 503 (the work is shed, not queued without end).
  [[nodiscard]] bool try_post(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Queues `job` unless `bounded` and `capacity` jobs are already queued.
  bool enqueue(std::function<void()> job, bool bounded) ABSL_LOCKS_EXCLUDED(mu_);
  void run() ABSL_LOCKS_EXCLUDED(mu_);

  const size_t capacity_;
  Mutex mu_;
  CondVar wake_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: started once the rest exists
};

}  // namespace kvgate::serving
