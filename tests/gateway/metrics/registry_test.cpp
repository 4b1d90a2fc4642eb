// The exposition, line by line, as Prometheus' text format 0.0.4 defines
// it (promtool checks the real server's in tests/e2e), and the counting
// rules behind it: exact integer units, inclusive buckets, bounded label
// sets, concurrent increments that lose nothing.
#include "gateway/metrics/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace kvgate::metrics {
namespace {

TEST(MetricsRegistry, CountersAndGaugesAreExposedWithHelpTypeAndLabels) {
  Registry r;
  Family<Counter>& req = r.counter({"kvgate_requests_total", "Requests.", {"tenant", "finish_reason"}});
  Family<Gauge>& run = r.gauge({"kvgate_requests_running", "Running.", {}});
  req.at({"acme", "stop"}).add(3);
  req.at({"acme", "length"}).add();
  run.at({}).set(2);
  EXPECT_EQ(r.expose(),
            "# HELP kvgate_requests_total Requests.\n"
            "# TYPE kvgate_requests_total counter\n"
            "kvgate_requests_total{tenant=\"acme\",finish_reason=\"length\"} 1\n"
            "kvgate_requests_total{tenant=\"acme\",finish_reason=\"stop\"} 3\n"
            "# HELP kvgate_requests_running Running.\n"
            "# TYPE kvgate_requests_running gauge\n"
            "kvgate_requests_running 2\n");
}

TEST(MetricsRegistry, ACounterInMicroUnitsPrintsExactDecimals) {
  Registry r;
  Family<Counter>& cost = r.counter({"kvgate_cost_usd_total", "Cost.", {"tenant"}, 6});
  cost.at({"a"}).add(1'234'567);
  cost.at({"b"}).add(30);
  cost.at({"c"});
  const std::string text = r.expose();
  EXPECT_NE(text.find("kvgate_cost_usd_total{tenant=\"a\"} 1.234567\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kvgate_cost_usd_total{tenant=\"b\"} 0.000030\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kvgate_cost_usd_total{tenant=\"c\"} 0.000000\n"), std::string::npos) << text;
}

TEST(MetricsRegistry, LabelValuesAndHelpAreEscaped) {
  Registry r;
  Family<Counter>& f = r.counter({"kvgate_x_total", "Back\\slash and\nnewline.", {"tenant"}});
  f.at({"a\"b\\c\nd"}).add();
  const std::string text = r.expose();
  EXPECT_NE(text.find("# HELP kvgate_x_total Back\\\\slash and\\nnewline.\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kvgate_x_total{tenant=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
}

TEST(MetricsRegistry, HistogramBucketsAreInclusiveCumulativeAndEndInInf) {
  Registry r;
  Family<Histogram>& h = r.histogram({"kvgate_latency_seconds", "Latency.", {"model"}}, {0.1, 0.5, 1});
  Histogram& m = h.at({"m"});
  for (double v : {0.05, 0.1, 0.3, 1.0, 7.0}) m.observe(v);
  m.observe(std::nan(""));  // undefined figures are not observations
  EXPECT_EQ(r.expose(),
            "# HELP kvgate_latency_seconds Latency.\n"
            "# TYPE kvgate_latency_seconds histogram\n"
            "kvgate_latency_seconds_bucket{model=\"m\",le=\"0.1\"} 2\n"
            "kvgate_latency_seconds_bucket{model=\"m\",le=\"0.5\"} 3\n"
            "kvgate_latency_seconds_bucket{model=\"m\",le=\"1\"} 4\n"
            "kvgate_latency_seconds_bucket{model=\"m\",le=\"+Inf\"} 5\n"
            "kvgate_latency_seconds_sum{model=\"m\"} 8.45\n"
            "kvgate_latency_seconds_count{model=\"m\"} 5\n");
}

TEST(MetricsRegistry, LabelSetsPastTheBoundShareTheOverflowSeries) {
  Registry r;
  Family<Counter>& f = r.counter({"kvgate_x_total", "X.", {"tenant"}});
  for (size_t i = 0; i < kDefaultMaxSeries + 50; ++i) {
    const std::string id = std::to_string(i);
    f.at({id}).add();
  }
  size_t series = 0;
  uint64_t overflow = 0;
  f.each([&](std::span<const std::string> labels, const Counter& c) {
    ++series;
    if (labels[0] == kOverflowLabel) overflow = c.value();
  });
  EXPECT_EQ(series, kDefaultMaxSeries + 1);
  EXPECT_EQ(overflow, 50u);
  f.at({"0"}).add();  // a known series keeps its own
  uint64_t t0 = 0;
  f.each([&](std::span<const std::string> labels, const Counter& c) {
    if (labels[0] == "0") t0 = c.value();
  });
  EXPECT_EQ(t0, 2u);
}

TEST(MetricsRegistry, NamesPrometheusWouldRejectAreRefusedAtRegistration) {
  Registry r;
  EXPECT_THROW(r.counter({"kvgate-bad", "", {}}), Error);
  EXPECT_THROW(r.counter({"1kvgate", "", {}}), Error);
  EXPECT_THROW(r.counter({"kvgate_x_total", "", {"__reserved"}}), Error);
  EXPECT_THROW(r.counter({"kvgate_x_total", "", {"le"}}), Error);
  EXPECT_THROW(r.histogram({"kvgate_h", "", {}}, {1, 1}), Error);
  EXPECT_THROW(r.histogram({"kvgate_h", "", {}}, {}), Error);
  r.counter({"kvgate_x_total", "", {"tenant"}});
  EXPECT_THROW(r.gauge({"kvgate_x_total", "", {}}), Error);  // twice
  Family<Counter>& f = r.counter({"kvgate_y_total", "", {"a", "b"}});
  EXPECT_THROW(f.at({"only-one"}), Error);
}

TEST(MetricsRegistry, ConcurrentIncrementsLoseNothing) {
  Registry r;
  Family<Counter>& c = r.counter({"kvgate_x_total", "X.", {"tenant"}});
  Family<Histogram>& h = r.histogram({"kvgate_h_seconds", "H.", {}}, {0.5});
  constexpr int kThreads = 4, kEach = 20000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        c.at({t % 2 ? "a" : "b"}).add();
        h.at({}).observe(i % 2 ? 0.25 : 1.0);
        if (i % 1000 == 0) (void)r.expose();  // a scrape in the middle
      }
    });
  for (auto& t : ts) t.join();
  uint64_t total = 0;
  c.each([&](std::span<const std::string>, const Counter& x) { total += x.value(); });
  EXPECT_EQ(total, uint64_t{kThreads} * kEach);
  const Histogram& hist = h.at({});
  EXPECT_EQ(hist.count(), uint64_t{kThreads} * kEach);
  EXPECT_EQ(hist.cumulative_counts()[0], uint64_t{kThreads} * kEach / 2);
  EXPECT_DOUBLE_EQ(hist.sum(), kThreads * (kEach / 2) * 1.25);
}

}  // namespace
}  // namespace kvgate::metrics
