// The six quota flags, shared by `tenants create` and `quotas set`: each
// maps to one member of the admin API's `quotas` object. Values go to the
// server as given; it refuses a negative one, naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>

namespace kvgatectl {

struct QuotaFlag {
  const char* key;    // the JSON member, e.g. "requests_per_minute"
  const char* flag;   // e.g. "--requests-per-minute"
  const char* help;
};

const std::vector<QuotaFlag>& quota_flags();

class QuotaValues {
 public:
  void add_to(CLI::App& cmd);
  bool any() const;
  // Only the members given.
  boost::json::object json() const;

 private:
  std::vector<std::optional<int64_t>> values_ = std::vector<std::optional<int64_t>>(quota_flags().size());
};

}  // namespace kvgatectl
