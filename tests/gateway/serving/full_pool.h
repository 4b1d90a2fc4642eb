// A bounded BlockingPool that is full: its one thread held inside a job and
// its one queued place taken, until release() (or destruction). What a
// route that sheds work is tested against: its next try_post() is refused.
#pragma once

#include <future>

#include "gateway/serving/blocking_pool.h"

namespace kvgate::serving::testing {

class FullPool {
 public:
  FullPool() {
    std::promise<void> running;
    pool_.post([&running, gate = gate_] {
      running.set_value();
      gate.wait();
    });
    running.get_future().wait();
    queued_ = pool_.try_post([gate = gate_] { gate.wait(); });
  }
  ~FullPool() { release(); }
  FullPool(const FullPool&) = delete;
  FullPool& operator=(const FullPool&) = delete;

  BlockingPool& pool() { return pool_; }
  bool full() const { return queued_; }
  void release() {
    if (!released_) release_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> release_;
  std::shared_future<void> gate_ = release_.get_future().share();
  bool queued_ = false;
  bool released_ = false;
  BlockingPool pool_{1, 1};  // last: joined first, once the gate is open
};

}  // namespace kvgate::serving::testing
