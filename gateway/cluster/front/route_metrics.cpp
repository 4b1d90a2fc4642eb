#include "gateway/cluster/front/route_metrics.h"

namespace kvgate::front {
namespace {

metrics::FamilyInfo per_replica(std::string name, std::string help, std::vector<std::string> more = {}) {
  std::vector<std::string> labels{"replica"};
  labels.insert(labels.end(), more.begin(), more.end());
  return {std::move(name), std::move(help), std::move(labels), 0};
}

}  // namespace

RouteMetrics::RouteMetrics(metrics::Registry& r)
    : up_(r.gauge(per_replica("kvgate_route_replica_up", "1 while the replica is in rotation."))),
      scorable_(r.gauge(per_replica("kvgate_route_replica_scorable",
                                    "1 while the replica's cache identity is the front's and its events are heard: "
                                    "its prefix residency counts."))),
      unscorable_(r.gauge(per_replica("kvgate_route_replica_unscorable_info",
                                      "1 with the reason while the replica is not scored for prefix overlap.",
                                      {"reason"}))),
      load_(r.gauge(per_replica("kvgate_route_replica_load_tokens",
                                "Prompt plus max_tokens of the requests placed on the replica and not finished."))),
      requests_(r.counter(per_replica("kvgate_route_requests_total", "Requests placed on the replica."))),
      retries_(r.counter(per_replica("kvgate_route_retries_total",
                                     "Requests moved away from the replica before their first token."))),
      stream_errors_(r.counter(per_replica("kvgate_route_stream_errors_total",
                                           "Streams the replica failed after their first token."))),
      gaps_(r.counter(per_replica("kvgate_route_event_gaps_total", "Sequence gaps in the replica's block events."))),
      bad_messages_(r.counter(per_replica("kvgate_route_event_bad_messages_total",
                                          "Block-event messages from the replica that did not decode."))),
      digest_mismatches_(r.counter(per_replica("kvgate_route_digest_mismatches_total",
                                               "Digests from the replica that disagreed with the front's view."))),
      view_agrees_(r.gauge(per_replica("kvgate_route_view_agrees", "1 when the replica's last digest matched."))),
      resyncs_(r.counter(per_replica("kvgate_route_resyncs_total",
                                     "Snapshots of the replica's blocks the front rebuilt its view from."))),
      resync_failures_(r.counter(per_replica("kvgate_route_resync_failures_total",
                                             "Snapshots of the replica's blocks asked for and not applied."))) {}

void RouteMetrics::refresh(const ReplicaSet& replicas) {
  for (const ReplicaView& v : replicas.snapshot()) {
    const std::string_view u = v.url;
    up_.at({u}).set(v.up ? 1 : 0);
    scorable_.at({u}).set(v.scorable ? 1 : 0);
    // One reason series at 1 per replica; one that no longer holds goes to 0.
    const std::string reason = v.scorable ? std::string() : (v.mismatch.empty() ? "unknown" : v.mismatch);
    std::string& last = reason_[v.url];
    if (!last.empty() && last != reason) unscorable_.at({u, last}).set(0);
    if (!reason.empty()) unscorable_.at({u, reason}).set(1);
    last = reason;
    load_.at({u}).set(static_cast<double>(v.load_tokens));
    requests_.at({u}).set_total(static_cast<uint64_t>(v.placed));
    retries_.at({u}).set_total(static_cast<uint64_t>(v.retries_from));
    stream_errors_.at({u}).set_total(static_cast<uint64_t>(v.stream_errors));
    gaps_.at({u}).set_total(static_cast<uint64_t>(v.feed.gaps));
    bad_messages_.at({u}).set_total(static_cast<uint64_t>(v.feed.bad_messages));
    digest_mismatches_.at({u}).set_total(static_cast<uint64_t>(v.feed.digest_mismatches));
    view_agrees_.at({u}).set(v.feed.view_agrees ? 1 : 0);
    resyncs_.at({u}).set_total(static_cast<uint64_t>(v.resyncs));
    resync_failures_.at({u}).set_total(static_cast<uint64_t>(v.resync_failures));
  }
}

}  // namespace kvgate::front
