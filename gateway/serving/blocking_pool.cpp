// Invariant: every posted job runs exactly once, also when the queue is
// being destroyed (stopping_ only ends a thread once jobs_ is empty).
#include "gateway/serving/blocking_pool.h"

#include <cstdio>
#include <exception>

namespace kvgate::serving {

BlockingPool::BlockingPool(int threads, size_t capacity) : capacity_(capacity) {
  for (int i = 0; i < (threads < 1 ? 1 : threads); ++i) threads_.emplace_back([this] { run(); });
}

BlockingPool::~BlockingPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BlockingPool::post(std::function<void()> job) { (void)enqueue(std::move(job), false); }

bool BlockingPool::try_post(std::function<void()> job) { return enqueue(std::move(job), true); }

bool BlockingPool::enqueue(std::function<void()> job, bool bounded) {
  {
    MutexLock lock(mu_);
    if (bounded && capacity_ > 0 && jobs_.size() >= capacity_) return false;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void BlockingPool::run() {
  for (;;) {
    std::function<void()> job;
    {
      MutexLock lock(mu_);
      while (jobs_.empty() && !stopping_) wake_.wait(mu_);
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& e) {  // a job's own bug: keep the thread for the others
      std::fprintf(stderr, "kvgate: blocking pool: a job threw: %s\n", e.what());
    }
  }
}

}  // namespace kvgate::serving
