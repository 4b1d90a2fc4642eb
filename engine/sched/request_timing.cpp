// Latency figures from a request's milestones; pure functions, any thread.
#include "engine/sched/request_timing.h"

#include <limits>

namespace kvgate {
namespace {

double ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double ttft_ms(const RequestTiming& t) { return t.token_times.empty() ? kNaN : ms(t.token_times.front() - t.arrival); }

std::vector<double> itl_ms(const RequestTiming& t) {
  std::vector<double> gaps;
  for (size_t i = 1; i < t.token_times.size(); ++i) gaps.push_back(ms(t.token_times[i] - t.token_times[i - 1]));
  return gaps;
}

double tpot_ms(const RequestTiming& t) {
  const size_t n = t.token_times.size();
  if (n < 2) return kNaN;
  return ms(t.token_times.back() - t.token_times.front()) / static_cast<double>(n - 1);
}

double e2e_ms(const RequestTiming& t) { return ms(t.finished - t.arrival); }

}  // namespace kvgate
