// ResponseStore: the responses a tenant asked the Responses API to keep
// (POST /v1/responses with store: true), for GET and DELETE
// /v1/responses/{id} and for a later request's previous_response_id, in the
// tenancy store's two families:
//
//   kResponses        tenant id \0 response id -> StoredResponse record
//   kResponsesByTime  tenant id \0 be64(created ns) response id -> ""
//
// Isolation: every key begins with the tenant's id, and every call takes the
// caller's tenant, so another tenant's response is not found, exactly as an
// id never issued (the id is random, but the tenant in the key is what
// protects it, not its being unguessable).
//
// Retention: a response older than `ResponseLimits::retention` is not found
// (GET is a 404, a previous_response_id naming it a 404). Its bytes go when
// the tenant next stores one: put() drops the tenant's expired responses
// from the oldest on, so no thread sweeps the store.
//
// Quota: a tenant keeps at most `ResponseLimits::per_tenant`; put() of one
// more drops its oldest. Dropping rather than refusing (429) because put()
// runs when the answer has been generated and billed: a refusal then would
// throw away work the tenant paid for, and the oldest conversation is the
// one least likely to be continued (OpenAI's own stored responses expire
// the same way, by age).
//
// The gateway's bytes (the turn's input, the response object it answers
// GET with) are opaque here: tenancy/ knows no JSON.
//
// Thread-safe. put() and remove() are synced writes: call them off the I/O
// threads. A record that does not decode throws Error(kCorrupt).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "tenancy/clock.h"
#include "tenancy/store.h"

namespace kvgate::tenancy {

struct StoredResponse {
  std::string id;           // "resp_..."
  std::string previous_id;  // the response it continues; empty for a first turn
  int64_t created_ns = 0;
  std::string input;        // the turn's own input, as the gateway encodes it
  std::string output_text;  // what the model answered
  std::string object;       // the response object, as GET answers it
  // The token ids the model generated for output_text, as the gateway
  // encodes them (opaque here); empty when not known (a record of format 1).
  std::string output_tokens;

  bool operator==(const StoredResponse&) const = default;
};

struct ResponseLimits {
  std::chrono::seconds retention{std::chrono::hours(24 * 30)};  // OpenAI's 30 days
  uint64_t per_tenant = 10000;                                   // >= 1
};

class ResponseStore {
 public:
  // `store` and `clock` outlive this. Throws kInvalidArgument for a limit of 0.
  ResponseStore(Store& store, const WallClock& clock, ResponseLimits limits);

  // Stores `r` under `tenant` (replacing one of the same id), after
  // dropping the tenant's expired responses and, past the quota, its oldest.
  void put(std::string_view tenant, const StoredResponse& r) ABSL_LOCKS_EXCLUDED(mu_);
  // The tenant's response `id`, unless unknown, another tenant's or expired.
  std::optional<StoredResponse> get(std::string_view tenant, std::string_view id) const;
  // Deletes it; false when get() would not have found it.
  bool remove(std::string_view tenant, std::string_view id) ABSL_LOCKS_EXCLUDED(mu_);

  const ResponseLimits& limits() const { return limits_; }

 private:
  bool expired(const StoredResponse& r) const;
  // The tenant's count of kResponsesByTime entries, read once per tenant.
  uint64_t& count(const std::string& tenant) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store& store_;
  const WallClock& clock_;
  const ResponseLimits limits_;
  // Serializes put() and remove(), so a tenant's count and its entries agree.
  Mutex mu_;
  std::unordered_map<std::string, uint64_t> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::tenancy
