// The one place a finished request's token counts are read off the engine's
// result. The ledger record and the usage the client is shown are both built
// from the TokenUsage made here, so they agree to the token (DESIGN
// invariant 8), and prompt = cached + fresh holds in both (invariant 4).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/finish_reason.h"
#include "engine/request.h"
#include "engine/sched/request_timing.h"
#include "tenancy/ledger_record.h"
#include "tenancy/usage.h"

namespace kvgate::serving {

// Cached tokens by the tier they came from (prompt = device + host + disk + fresh).
tenancy::TokenUsage token_usage(const RequestResult& r);

tenancy::FinishReason ledger_finish_reason(FinishReason r);

// Whether the engine did any work for the request: one cancelled while it
// waited was never admitted and is not billed.
bool consumed_work(const RequestTiming& t);

// Maps steady-clock times (the engine's) to wall-clock nanoseconds (the
// ledger's) through one pair of readings taken together.
struct WallAnchor {
  SteadyClock::time_point steady;
  int64_t wall_ns = 0;
  static WallAnchor now();
  int64_t to_wall_ns(SteadyClock::time_point t) const {
    return wall_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(t - steady).count();
  }
};

struct RecordIds {
  std::string request_id;
  std::string tenant_id;
  std::string key_id;
  std::string model;
};

// cost_micros is left 0: Tenancy::finish prices the record by the plan its
// ticket captured at admission.
tenancy::LedgerRecord ledger_record(const RecordIds& ids, const RequestResult& r, const RequestTiming& t,
                                    const WallAnchor& clock);

}  // namespace kvgate::serving
