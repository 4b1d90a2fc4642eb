#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <vector>

#include "engine/cpu/work_split.h"

namespace kvgate::cpu {
namespace {

// Runs n items over a team of `team` threads, split for `shares` threads,
// each item spinning `cost(item)` iterations; returns how often each item ran.
template <class Cost>
std::vector<int> run(int64_t n, int shares, int team, Cost cost) {
  std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
  WorkSplit split;
  split.reset(n, shares);
#pragma omp parallel num_threads(team)
  split.run([&](int64_t item) {
    volatile int64_t sink = 0;
    for (int64_t i = 0; i < cost(item); ++i) sink = sink + i;
    seen[static_cast<size_t>(item)].fetch_add(1);
  });
  std::vector<int> counts;
  for (auto& s : seen) counts.push_back(s.load());
  return counts;
}

TEST(WorkSplit, EveryItemRunsExactlyOnce) {
  const auto cheap = [](int64_t) { return int64_t{0}; };
  // Item 0 is slow, so the others finish first and take from its share.
  const auto lopsided = [](int64_t item) { return item == 0 ? int64_t{2000000} : int64_t{100}; };
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000})
    for (int team : {1, 2, 3, 4}) {
      SCOPED_TRACE(::testing::Message() << n << " items, " << team << " threads");
      EXPECT_EQ(run(n, team, team, cheap), std::vector<int>(static_cast<size_t>(n), 1));
      EXPECT_EQ(run(n, team, team, lopsided), std::vector<int>(static_cast<size_t>(n), 1));
    }
}

TEST(WorkSplit, ATeamOfAnotherSizeThanTheSharesRunsEveryItemOnce) {
  // Split for 4, run by 2 (a region that got fewer threads than asked) or
  // 1: the missing threads' shares are taken by the others. Split for 2,
  // run by 4: the threads past the shares only take from the others.
  EXPECT_EQ(run(100, 2, 4, [](int64_t) { return int64_t{0}; }), std::vector<int>(100, 1));
  for (int team : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << team << " threads");
    EXPECT_EQ(run(100, 4, team, [](int64_t) { return int64_t{0}; }), std::vector<int>(100, 1));
  }
}

TEST(WorkSplit, ReusedForAnotherSplit) {
  WorkSplit split;
  for (int64_t n : {10, 3, 50}) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    split.reset(n, 2);
#pragma omp parallel num_threads(2)
    split.run([&](int64_t item) { seen[static_cast<size_t>(item)].fetch_add(1); });
    for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  }
}

}  // namespace
}  // namespace kvgate::cpu
