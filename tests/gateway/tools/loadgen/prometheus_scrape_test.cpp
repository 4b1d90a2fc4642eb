// Reading counters from the text exposition: one family summed by tenant,
// other families and comments left alone, bad lines skipped.
#include <gtest/gtest.h>

#include "gateway/tools/loadgen/prometheus_scrape.h"

namespace kvgate::loadgen {
namespace {

const char* kText =
    "# HELP kvgate_cost_usd_total What the tenant was billed.\n"
    "# TYPE kvgate_cost_usd_total counter\n"
    "kvgate_cost_usd_total{tenant=\"bench-0\"} 0.00125\n"
    "kvgate_cost_usd_total{tenant=\"bench-1\"} 2.5e-3\n"
    "kvgate_cost_usd_total{tenant=\"we\\\"ird\\\\\"} 1\n"
    "kvgate_cost_without_cache_usd_total{tenant=\"bench-0\"} 0.01\n"
    "kvgate_cost_usd_total_extra{tenant=\"bench-0\"} 99\n"
    "kvgate_requests_total{tenant=\"bench-0\",model=\"m\",finish_reason=\"length\"} 3\n"
    "kvgate_requests_total{model=\"m\",tenant=\"bench-0\",finish_reason=\"stop\"} 2 1700000000000\n"
    "kvgate_requests_running 4\n"
    "kvgate_cost_usd_total{tenant=\"bench-0\" 5\n"
    "kvgate_cost_usd_total{tenant=\"bench-0\"} not-a-number\n";

TEST(PrometheusScrape, SumsOneFamilyByLabel) {
  const auto cost = sum_by_label(kText, "kvgate_cost_usd_total", "tenant");
  ASSERT_EQ(cost.size(), 3u);
  EXPECT_DOUBLE_EQ(cost.at("bench-0"), 0.00125);  // the malformed lines added nothing
  EXPECT_DOUBLE_EQ(cost.at("bench-1"), 0.0025);
  EXPECT_DOUBLE_EQ(cost.at("we\"ird\\"), 1);
}

TEST(PrometheusScrape, LabelsInAnyOrderAndTimestamps) {
  const auto req = sum_by_label(kText, "kvgate_requests_total", "tenant");
  ASSERT_EQ(req.size(), 1u);
  EXPECT_DOUBLE_EQ(req.at("bench-0"), 5);
}

TEST(PrometheusScrape, ASampleWithoutTheLabelCountsUnderEmpty) {
  const auto running = sum_by_label(kText, "kvgate_requests_running", "tenant");
  ASSERT_EQ(running.size(), 1u);
  EXPECT_DOUBLE_EQ(running.at(""), 4);
  EXPECT_TRUE(sum_by_label(kText, "kvgate_absent_total", "tenant").empty());
}

}  // namespace
}  // namespace kvgate::loadgen
