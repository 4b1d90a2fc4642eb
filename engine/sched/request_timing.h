// When a request's milestones happened, and the latency figures read off
// them (DESIGN "Everything measured").
//
// Each milestone is kept twice: as a steady_clock time (for metrics and
// benchmarks) and as the scheduler's step number (for tests, which count
// steps and never time anything).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace kvgate {

// Monotonic time for latencies: never the wall clock, which tenancy uses
// for billing periods (tenancy/clock.h) and which may jump.
using SteadyClock = std::chrono::steady_clock;

struct RequestTiming {
  SteadyClock::time_point arrival, admitted, first_token, finished;
  std::vector<SteadyClock::time_point> token_times;  // one per output token, in order
  // Scheduler step numbers of the same milestones (-1: not reached).
  int64_t arrival_step = -1, admitted_step = -1, first_token_step = -1, finished_step = -1;
};

// Time to first token: arrival to the first output token. NaN without one.
double ttft_ms(const RequestTiming& t);
// Inter-token latencies: the gaps between consecutive output tokens.
std::vector<double> itl_ms(const RequestTiming& t);
// Time per output token after the first: (t_last - t_first) / (n_out - 1).
// NaN (undefined) for fewer than two tokens.
double tpot_ms(const RequestTiming& t);
// Arrival to finish.
double e2e_ms(const RequestTiming& t);

}  // namespace kvgate
