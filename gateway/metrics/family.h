// Family: one metric name and its series, one per label set, created on
// first use and never removed (Prometheus expects a series to persist).
//
// Cardinality is bounded: past `max_series` label sets, new ones share one
// series whose every label is "_other", so a flood of tenant ids cannot grow
// the exposition without end. Label values must be non-secret and bounded
// (tenant ids, model ids, enum names): never request ids, prompts or scopes.
//
// Threads: at() and each() take the family's mutex (a map lookup); the
// series they hand out are updated lock-free. Callers on a hot path keep the
// reference at() returned: it stays valid for the family's life.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/mutex.h"

namespace kvgate::metrics {

inline constexpr std::string_view kOverflowLabel = "_other";

struct FamilyInfo {
  std::string name;  // kvgate_..., the unit in the name, counters ending in _total
  std::string help;
  std::vector<std::string> label_names;
  // Counters only: the value is kept in units of 10^-decimals (6 for
  // micro-dollars exposed as dollars) and printed exactly.
  int decimals = 0;
};

template <class Series>
class Family {
 public:
  template <class Make>
  Family(FamilyInfo info, size_t max_series, Make make)
      : info_(std::move(info)), max_series_(max_series), make_(std::move(make)) {}

  const FamilyInfo& info() const { return info_; }

  // The series of these label values, in the order of info().label_names.
  Series& at(std::initializer_list<std::string_view> values) {
    return at(std::span<const std::string_view>(values.begin(), values.size()));
  }
  Series& at(std::span<const std::string_view> values) {
    if (values.size() != info_.label_names.size())
      throw Error(info_.name + ": " + std::to_string(values.size()) + " label values for " +
                  std::to_string(info_.label_names.size()) + " labels");
    std::vector<std::string> key(values.begin(), values.end());
    MutexLock lock(mu_);
    auto it = series_.find(key);
    if (it != series_.end()) return *it->second;
    if (series_.size() >= max_series_) key.assign(key.size(), std::string(kOverflowLabel));
    auto [slot, fresh] = series_.try_emplace(std::move(key));
    if (fresh) slot->second = make_();
    return *slot->second;
  }

  // Every series, in label order.
  template <class Fn>
  void each(Fn&& fn) const {
    MutexLock lock(mu_);
    for (const auto& [labels, s] : series_) fn(std::span<const std::string>(labels), std::as_const(*s));
  }
  template <class Fn>
  void each(Fn&& fn) {
    MutexLock lock(mu_);
    for (auto& [labels, s] : series_) fn(std::span<const std::string>(labels), *s);
  }

 private:
  const FamilyInfo info_;
  const size_t max_series_;
  std::function<std::unique_ptr<Series>()> make_;
  mutable Mutex mu_;
  // One slot past max_series_: the overflow series.
  std::map<std::vector<std::string>, std::unique_ptr<Series>> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::metrics
