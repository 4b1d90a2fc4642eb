// The arrival scheduler: timers, the concurrency limit, conversations'
// order. One thread: the io_context's.
#include "gateway/tools/loadgen/load_run.h"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <memory>

#include <boost/asio/steady_timer.hpp>

#include "base/error.h"
#include "gateway/tools/loadgen/completion_call.h"

namespace kvgate::loadgen {
namespace net = boost::asio;

namespace {

using Clock = std::chrono::steady_clock;

class LoadRun {
 public:
  LoadRun(net::io_context& io, client::ConnectionPool& pool, const Workload& w, const RunSettings& s)
      : io_(io), pool_(pool), w_(w), s_(s), arrival_timer_(io), progress_timer_(io),
        finished_(w.requests.size(), false), parked_(w.requests.size()) {
    result_.outcomes.resize(w.requests.size());
    by_arrival_.resize(w.requests.size());
    for (size_t i = 0; i < by_arrival_.size(); ++i) by_arrival_[i] = i;
    std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                     [&](size_t a, size_t b) { return w.requests[a].arrival_s < w.requests[b].arrival_s; });
    call_.model = s.model;
    call_.timeout = s.timeout;
    tty_ = s.progress && isatty(fileno(s.progress));
  }

  RunResult run() {
    t0_ = Clock::now();
    if (w_.requests.empty()) return std::move(result_);
    arm_arrivals();
    if (s_.progress && s_.progress_interval_s > 0) arm_progress();
    io_.restart();
    io_.run();
    if (printed_progress_ && tty_) std::fputc('\n', s_.progress);
    result_.connections_opened = pool_.opened();
    return std::move(result_);
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  void arm_arrivals() {
    const double now = now_s();
    while (next_ < by_arrival_.size() && w_.requests[by_arrival_[next_]].arrival_s <= now) release(by_arrival_[next_++]);
    dispatch();
    if (next_ == by_arrival_.size()) return;
    const double at = w_.requests[by_arrival_[next_]].arrival_s;
    arrival_timer_.expires_at(t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at)));
    arrival_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) arm_arrivals();
    });
  }

  // Due: send it, or park it behind the turn it continues.
  void release(size_t i) {
    const int64_t after = w_.requests[i].after;
    if (after >= 0 && !finished_[static_cast<size_t>(after)]) {
      parked_[static_cast<size_t>(after)].push_back(i);
      return;
    }
    ready_.push_back(i);
  }

  void dispatch() {
    while (!ready_.empty() && (s_.max_concurrency <= 0 || in_flight_ < s_.max_concurrency)) {
      const size_t i = ready_.front();
      ready_.pop_front();
      send(i);
    }
  }

  void send(size_t i) {
    const PlannedRequest& p = w_.requests[i];
    ++in_flight_;
    result_.peak_in_flight = std::max(result_.peak_in_flight, in_flight_);
    RequestOutcome o;
    o.index = static_cast<int64_t>(i);
    o.tenant = p.tenant;
    CompletionCall call = call_;
    call.api_key = s_.api_keys[static_cast<size_t>(p.tenant)];
    start_completion(pool_, t0_, call, p.prompt, p.max_tokens, std::move(o),
                     [this, i](RequestOutcome done) { on_done(i, std::move(done)); });
  }

  void on_done(size_t i, RequestOutcome o) {
    --in_flight_;
    finished_[i] = true;
    if (!o.ok) ++failed_;
    result_.duration_s = std::max(result_.duration_s, o.end_s);
    result_.outcomes[i] = std::move(o);
    ++done_;
    for (size_t d : parked_[i]) ready_.push_back(d);
    parked_[i].clear();
    dispatch();
    if (done_ == w_.requests.size()) {
      arrival_timer_.cancel();
      progress_timer_.cancel();
      if (printed_progress_) print_progress();
    }
  }

  void arm_progress() {
    progress_timer_.expires_after(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(s_.progress_interval_s)));
    progress_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      print_progress();
      arm_progress();
    });
  }

  void print_progress() {
    printed_progress_ = true;
    std::fprintf(s_.progress, "%sbench-serve: %6.1f s: %zu/%zu done (%zu failed), %d in flight, %zu queued%s",
                 tty_ ? "\r" : "", now_s(), done_, w_.requests.size(), failed_, in_flight_,
                 ready_.size() + (by_arrival_.size() - next_), tty_ ? "\033[K" : "\n");
    std::fflush(s_.progress);
  }

  net::io_context& io_;
  client::ConnectionPool& pool_;
  const Workload& w_;
  const RunSettings& s_;
  CompletionCall call_;
  net::steady_timer arrival_timer_;
  net::steady_timer progress_timer_;
  Clock::time_point t0_;
  std::vector<size_t> by_arrival_;
  size_t next_ = 0;                           // into by_arrival_: the next not yet due
  std::deque<size_t> ready_;                  // due, waiting for a concurrency slot
  std::vector<bool> finished_;
  std::vector<std::vector<size_t>> parked_;   // [i]: due requests waiting for i to finish
  int32_t in_flight_ = 0;
  size_t done_ = 0;
  size_t failed_ = 0;
  bool tty_ = false;
  bool printed_progress_ = false;
  RunResult result_;
};

}  // namespace

RunResult run_load(net::io_context& io, client::ConnectionPool& pool, const Workload& w, const RunSettings& s) {
  for (const PlannedRequest& p : w.requests) {
    if (p.tenant < 0 || static_cast<size_t>(p.tenant) >= s.api_keys.size())
      throw Error("the workload has tenant " + std::to_string(p.tenant) + " but " + std::to_string(s.api_keys.size()) +
                  " API keys were given");
    if (p.after >= static_cast<int64_t>(w.requests.size()))
      throw Error("a planned request waits for request " + std::to_string(p.after) + ", which is not planned");
  }
  LoadRun run(io, pool, w, s);
  return run.run();
}

}  // namespace kvgate::loadgen
