// Registry: the metric families of one process and their exposition in the
// Prometheus text format 0.0.4 (what /metrics serves; promtool checks it in
// tests/e2e). Families are registered at start-up, before any thread reads
// them, and live as long as the registry; expose() runs on any thread.
#pragma once

#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "gateway/metrics/counter.h"
#include "gateway/metrics/family.h"
#include "gateway/metrics/gauge.h"
#include "gateway/metrics/histogram.h"

namespace kvgate::metrics {

inline constexpr size_t kDefaultMaxSeries = 1000;

class Registry {
 public:
  // Throw kvgate::Error for a name or label name Prometheus would reject, a
  // name registered twice, or bounds that are not finite and increasing.
  Family<Counter>& counter(FamilyInfo info);
  Family<Gauge>& gauge(FamilyInfo info);
  Family<Histogram>& histogram(FamilyInfo info, std::vector<double> bounds);

  // Every family in registration order, with HELP and TYPE lines.
  std::string expose() const;

 private:
  void check_new(const FamilyInfo& info);

  using AnyFamily = std::variant<Family<Counter>, Family<Gauge>, Family<Histogram>>;
  std::deque<AnyFamily> families_;  // a deque: references stay valid as it grows
  std::vector<std::string> names_;
};

}  // namespace kvgate::metrics
