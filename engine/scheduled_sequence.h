// One request inside the Scheduler: a Sequence (tokens, block table, hash
// chain, sampler, token limit) plus what scheduling needs: its tenant and
// priority, its stream, when it was admitted, its timing.
#pragma once

#include <memory>

#include "engine/request_stream.h"
#include "engine/request_timing.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"

namespace kvgate {

struct ScheduledSequence : Sequence {
  using Sequence::Sequence;

  Submitter who;
  std::shared_ptr<RequestStream> stream;
  RequestTiming timing;
  int64_t admission = 0;       // admissions_ when last admitted: larger = more recent
  bool ever_admitted = false;  // the token accounting is that of the first admission
  int32_t n_prefix_hit = 0;    // cached prefix blocks at enqueue (FairQueue's estimate)
  int32_t n_lost = 0;          // n_computed when last preempted (to count recomputation)
};

}  // namespace kvgate
