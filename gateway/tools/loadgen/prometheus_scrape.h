// Reading counters off a server's GET /metrics (Prometheus text format
// 0.0.4), as much as the load generator needs: the samples of one family,
// summed per value of one label. The run's bill and the server's hit rate
// are the differences of two scrapes, before and after (docs/metrics.md has
// the families).
//
// The text comes from the server under test: a line that does not parse is
// skipped, never trusted and never a crash; comments (# HELP, # TYPE) and
// blank lines are skipped as the format says.
//
// Pure; any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kvgate::loadgen {

// family's samples (the exact metric name, no suffix), summed by the value
// of `label` ("" for a sample without it).
std::map<std::string, double> sum_by_label(std::string_view text, std::string_view family, std::string_view label);

}  // namespace kvgate::loadgen
