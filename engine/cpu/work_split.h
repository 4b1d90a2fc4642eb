// Items [0, n) shared by an OpenMP team so that it finishes together even
// when its threads run at different speeds (the vCPUs of one VM differ by
// 10-15% here): each thread takes its own contiguous share front to back,
// and a thread whose share is done takes the last item of the share with
// the most left, back to front. Each thread's items stay contiguous (the
// hardware prefetcher's streams, and outputs written by one thread but at
// the one place two shares meet), where schedule(dynamic) interleaves
// them.
#pragma once

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace kvgate::cpu {

class WorkSplit {
 public:
  // On one thread before the team runs it (before the parallel region, or
  // in an omp single): n items over `threads` shares.
  void reset(int64_t n, int threads) {
    if (threads > capacity_) {
      ranges_ = std::make_unique<Range[]>(static_cast<size_t>(threads));
      capacity_ = threads;
    }
    threads_ = threads;
    for (int t = 0; t < threads; ++t)
      ranges_[t].v.store(pack(n * t / threads, n * (t + 1) / threads), std::memory_order_relaxed);
  }

  // Inside the region, on every thread of the team: f(item) for each item
  // this thread gets. A thread past the shares (a team larger than the
  // split) only takes from others; a share without its thread is taken by
  // the rest. The region's closing barrier (or the caller's) orders the results.
  template <class F>
  void run(F&& f) {
    const int me = omp_get_thread_num();
    if (me < threads_)
      for (int64_t item; (item = take_front(ranges_[me])) >= 0;) f(item);
    for (;;) {
      int victim = -1;
      int64_t most = 0;
      for (int t = 0; t < threads_; ++t) {
        const uint64_t v = ranges_[t].v.load(std::memory_order_relaxed);
        if (end_of(v) - begin_of(v) > most) most = end_of(v) - begin_of(v), victim = t;
      }
      if (victim < 0) return;
      if (const int64_t item = take_back(ranges_[victim]); item >= 0) f(item);
    }
  }

 private:
  // [begin, end) of one share in one word, so a take is one compare-exchange.
  struct alignas(64) Range {
    std::atomic<uint64_t> v{0};
  };
  static uint64_t pack(int64_t begin, int64_t end) {
    return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32;
  }
  static int64_t begin_of(uint64_t v) { return static_cast<int64_t>(v & 0xffffffffu); }
  static int64_t end_of(uint64_t v) { return static_cast<int64_t>(v >> 32); }

  static int64_t take_front(Range& r) {
    uint64_t v = r.v.load(std::memory_order_relaxed);
    while (begin_of(v) < end_of(v))
      if (r.v.compare_exchange_weak(v, pack(begin_of(v) + 1, end_of(v)), std::memory_order_relaxed))
        return begin_of(v);
    return -1;
  }
  static int64_t take_back(Range& r) {
    uint64_t v = r.v.load(std::memory_order_relaxed);
    while (begin_of(v) < end_of(v))
      if (r.v.compare_exchange_weak(v, pack(begin_of(v), end_of(v) - 1), std::memory_order_relaxed))
        return end_of(v) - 1;
    return -1;
  }

  std::unique_ptr<Range[]> ranges_;
  int capacity_ = 0;
  int threads_ = 0;
};

}  // namespace kvgate::cpu
