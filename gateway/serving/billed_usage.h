// The one place a finished request's token counts are read off the engine's
// result. The ledger record and the usage the client is shown are both built
// from the TokenUsage made here, so they agree to the token (DESIGN
// invariant 8), and prompt = cached + fresh holds in both (invariant 4).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "engine/finish_reason.h"
#include "engine/request.h"
#include "engine/sched/request_timing.h"
#include "tenancy/ledger_record.h"
#include "tenancy/usage.h"

namespace kvgate::serving {

// Cached tokens by the tier they came from (prompt = device + host + disk +
// fresh), and the fresh tokens the request wrote into blocks it pinned, by
// the pin's price class: a block in a span of up to kShortPinTtl is a
// 5-minute write, one in a longer span a 1-hour write (the longest span a
// block is in decides, as the pool keeps a block's longest ttl). A block
// the request found cached is a read, never a write; a pin the engine
// refused wrote nothing it bills. `pins` are the request's, `block_size`
// the engine's.
tenancy::TokenUsage token_usage(const RequestResult& r, std::span<const PinSpan> pins, int32_t block_size);

// The longest pin billed as a 5-minute write (Anthropic's "5m").
inline constexpr std::chrono::seconds kShortPinTtl{300};

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

// `usage` is token_usage()'s. cost_micros is left 0: Tenancy::finish prices
// the record by the plan its ticket captured at admission.
tenancy::LedgerRecord ledger_record(const RecordIds& ids, const tenancy::TokenUsage& usage, FinishReason finish,
                                    const RequestTiming& t, const WallAnchor& clock);

}  // namespace kvgate::serving
