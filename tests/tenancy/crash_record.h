// The ledger record the crash child writes for a given request id, derived
// from the id alone so the parent can check every acknowledged record is
// intact without being told its contents.
#pragma once

#include <cstdint>
#include <string>

#include "tenancy/ledger_record.h"

namespace kvgate::tenancy::testing {

inline constexpr const char* kCrashTenant = "crash";

inline LedgerRecord crash_record(const std::string& request_id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across processes
  for (unsigned char c : request_id) h = (h ^ c) * 1099511628211ull;
  LedgerRecord r;
  r.request_id = request_id;
  r.tenant_id = kCrashTenant;
  r.key_id = "key_" + std::to_string(h % 97);
  r.model = "model-" + std::to_string(h % 5);
  r.arrival_ns = 1'700'000'000'000'000'000 + static_cast<int64_t>(h % 1'000'000'000'000);
  r.first_token_ns = r.arrival_ns + static_cast<int64_t>(h % 1000);
  r.finish_ns = r.first_token_ns + static_cast<int64_t>(h % 7919);
  r.tokens.cached_device = h % 4096;
  r.tokens.cached_host = (h >> 12) % 2048;
  r.tokens.cached_disk = (h >> 24) % 1024;
  r.tokens.fresh_prefill = (h >> 36) % 512;
  r.tokens.prompt_tokens = r.tokens.cached_device + r.tokens.cached_host + r.tokens.cached_disk +
                           r.tokens.fresh_prefill;
  r.tokens.cache_written = (h >> 44) % 256;
  r.tokens.output_tokens = (h >> 52) % 4096;
  r.finish_reason = static_cast<FinishReason>(1 + h % 4);
  r.cost_micros = h % 1'000'000;
  return r;
}

}  // namespace kvgate::tenancy::testing
