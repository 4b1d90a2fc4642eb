// RouteMetrics: what a route front adds to the `kvgate_` exposition, per
// replica (label `replica`, its URL), refreshed from the ReplicaSet at each
// scrape (docs/metrics.md, "Route front"):
//
//   kvgate_route_replica_up                     1 in rotation, 0 out
//   kvgate_route_replica_scorable               1 when its prefix residency counts
//   kvgate_route_replica_unscorable_info        1 with `reason` (the field that differs) while it does not
//   kvgate_route_replica_load_tokens            prompt + max_tokens placed there and not finished
//   kvgate_route_requests_total                 requests placed there (a retry counts again)
//   kvgate_route_retries_total                  requests moved away from it before their first token
//   kvgate_route_stream_errors_total            streams it failed after their first token
//   kvgate_route_event_gaps_total               sequence gaps in its block events
//   kvgate_route_event_bad_messages_total       block-event messages that did not decode
//   kvgate_route_digest_mismatches_total        digests that disagreed with the front's view
//   kvgate_route_view_agrees                    1 when its last digest matched
//   kvgate_route_resyncs_total                  snapshots of its blocks applied
//   kvgate_route_resync_failures_total          snapshots asked for and not applied
//
// Threads: refresh() on whichever thread scrapes (the blocking pool), one at a time.
#pragma once

#include <map>
#include <string>

#include "gateway/cluster/front/replica_set.h"
#include "gateway/metrics/registry.h"

namespace kvgate::front {

class RouteMetrics {
 public:
  explicit RouteMetrics(metrics::Registry& registry);
  void refresh(const ReplicaSet& replicas);

 private:
  metrics::Family<metrics::Gauge>& up_;
  metrics::Family<metrics::Gauge>& scorable_;
  metrics::Family<metrics::Gauge>& unscorable_;
  metrics::Family<metrics::Gauge>& load_;
  metrics::Family<metrics::Counter>& requests_;
  metrics::Family<metrics::Counter>& retries_;
  metrics::Family<metrics::Counter>& stream_errors_;
  metrics::Family<metrics::Counter>& gaps_;
  metrics::Family<metrics::Counter>& bad_messages_;
  metrics::Family<metrics::Counter>& digest_mismatches_;
  metrics::Family<metrics::Gauge>& view_agrees_;
  metrics::Family<metrics::Counter>& resyncs_;
  metrics::Family<metrics::Counter>& resync_failures_;
  std::map<std::string, std::string> reason_;  // the unscorable reason last exposed, by replica
};

}  // namespace kvgate::front
