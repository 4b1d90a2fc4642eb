// The wire between a route front (`kvgate route`) and one of its replicas
// (`kvgate serve` with [cluster] internal_token_file), both ends of it: the
// front has authenticated, admitted, tokenized and will bill the request;
// the replica only runs it. JSON over the internal HTTPS/1.1 link
// (internal_api.h serves it), behind `Authorization: Bearer <token>`.
//
//   POST /internal/v1/generate   body: a ReplicaCall
//     {"prompt":[ids], "scope":"<32 hex, hi then lo>", "tenant":u64,
//      "priority":i32, "cache_quota_blocks":i64, "pin_quota_blocks":i64, "max_tokens":i32,
//      "ignore_eos":bool, "use_cache":bool, "cache_salt":"...",
//      "pins":[[tokens:i32, ttl_s:i64], ...], "stop_ids":[ids],
//      "sampling":{"temperature":f, "top_k":i32, "top_p":f, "seed":u64}}
//   The prompt's chain is not sent: the replica hashes the prompt under the
//   scope itself, as the engine does when Request::prompt_chain is empty.
//   200, application/x-ndjson, streamed: one JSON object per '\n'-ended line,
//     {"tokens":[ids]}   one or more output ids, as they are sampled;
//     {"done":{"result":{...}, "error":"...", "timing":{...}}}   last, once:
//       result  every RequestResult field but id and output (the output is
//               the streamed ids), finish as finish_reason_name() spells it;
//       timing  admitted_us, first_token_us, finished_us: microseconds after
//               the replica's arrival stamp, -1 for a milestone not reached;
//               and the four *_step numbers as RequestTiming keeps them.
//   Before the stream starts, a failure is an ordinary response in OpenAI's
//   error shape: 400 (a body this file refuses, or the engine's limits),
//   401 (the token), 503 with retry-after (the engine is full or failed).
//
//   The stream's header names the replica's request id (kReplicaRequestIdHeader).
//   POST /internal/v1/cancel/<id>  ends that request early (its stream
//     still ends with the done line): a stop string matched at the front, or
//     its client went away. 200 {"cancelled": id}, unknown ids included.
//
//   GET /internal/v1/info        a ReplicaInfo: what the front checks before
//     it sends a replica anything (the cache identity must be its own) and
//     the replica's load.
//
//   GET /internal/v1/blocks      the snapshot of every block the replica
//     holds, per tier: application/octet-stream, one block-event message
//     (gateway/route/event_wire.h, type events, every event kStored) whose
//     seq S covers exactly the events of the messages of seq <= S on its
//     block-event socket. What a front that lost events, or subscribed
//     late, rebuilds its view of the replica from (event_subscriber.h).
//     404 on a replica that publishes no block events.
//
// Every decoder is strict: a missing key, a key it does not know, a value of
// the wrong type or out of range is a ReplicaWireError naming the field
// ("sampling.top_k", "prompt[3]", "done.timing.admitted_us"). The two ends
// are one build, so an unknown key is a bug, not a newer peer.
//
// Pure functions and a single-threaded reader: any thread, one reader per
// response.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/tiers/kv_identity.h"
#include "engine/request.h"
#include "engine/sched/request_limits.h"
#include "engine/sched/request_stream.h"
#include "engine/submitter.h"

namespace kvgate::wire {

class ReplicaWireError : public std::runtime_error {
 public:
  ReplicaWireError(std::string field, const std::string& what)
      : std::runtime_error(field.empty() ? what : field + ": " + what), field_(std::move(field)) {}
  // The JSON path of the offending value ("" for the body or line as a whole).
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

inline constexpr std::string_view kReplicaGeneratePath = "/internal/v1/generate";
inline constexpr std::string_view kReplicaInfoPath = "/internal/v1/info";
inline constexpr std::string_view kReplicaBlocksPath = "/internal/v1/blocks";
// POST kReplicaCancelPath + "<id>": ends the replica's request `id` (its
// generate response named it in kReplicaRequestIdHeader); its stream then
// ends as usual, with the done line and the request's accounting, which a
// front that closed the connection instead would never see.
inline constexpr std::string_view kReplicaCancelPath = "/internal/v1/cancel/";
inline constexpr std::string_view kReplicaRequestIdHeader = "x-kvgate-request-id";
inline constexpr std::string_view kReplicaStreamContentType = "application/x-ndjson";
// The longest response line a reader takes (a done line is a few hundred bytes).
inline constexpr size_t kReplicaMaxLine = size_t{1} << 20;

// ---- the request: front -> replica

struct ReplicaCall {
  Request request;  // prompt_chain always empty; output_grammar always none
  Submitter who;
  // The request's output grammar as its spec (grammar_spec.h), for the
  // replica to compile against its own vocabulary; empty: free text.
  std::string output_grammar_spec;
};

// Throws ReplicaWireError for a request that cannot be sent: no scope (the
// engine refuses those, so the wire has no way to say it), a sampling
// value that is not a finite number, or a value parse_replica_call()
// refuses (a negative id, max_tokens, pin TTL or cache quota). The cache salt must be UTF-8 (it came
// from a JSON string); other bytes make a body the replica refuses.
std::string encode_replica_call(const Request& r, const Submitter& who);
ReplicaCall parse_replica_call(std::string_view body);

// ---- the response stream: replica -> front

// One line, '\n' included.
std::string encode_token_line(std::span<const TokenId> tokens);
std::string encode_done_line(const Completion& c);

// The front's side of a response body: fed the bytes as they arrive, in
// pieces of any size, it calls on_token for each streamed id and on_done
// once for the done line, with a Completion whose timing is on the front's
// clock: arrival as given, each token's time the `now` of the feed() that
// delivered it, finished the `now` of the done line, admitted the
// replica's offset from arrival clamped between arrival and the first
// token (or the finish). The output is the ids streamed; result.id is 0
// (the front knows its own). Steps are the replica's.
class ReplicaStreamReader {
 public:
  ReplicaStreamReader(SteadyClock::time_point arrival, std::function<void(TokenId)> on_token,
                      std::function<void(Completion)> on_done);

  // Throws ReplicaWireError for a line that is not JSON, not exactly one of
  // the two shapes, tokens or anything else after the done line, or a line
  // longer than kReplicaMaxLine. After a throw the reader is spent.
  void feed(std::string_view bytes, SteadyClock::time_point now);
  // The done line was read. A body that ends before it was cut off.
  bool done() const { return done_; }

 private:
  void split(std::string_view bytes, SteadyClock::time_point now);
  void line(std::string_view text, SteadyClock::time_point now);

  const SteadyClock::time_point arrival_;
  const std::function<void(TokenId)> on_token_;
  const std::function<void(Completion)> on_done_;
  std::string partial_;  // the bytes of a line not yet ended
  Tokens output_;
  std::vector<SteadyClock::time_point> token_times_;
  bool done_ = false;
  bool spent_ = false;  // a feed() threw
};

// ---- the replica's description

struct ReplicaInfo {
  std::string model;            // the served model's name
  cache::KvIdentity identity;   // what its block hashes and records mean
  bool prefix_cache = false;
  RequestBounds bounds;         // what its engine refuses past
  std::string block_events;     // its block events' bound endpoint, or empty
  int64_t outstanding = 0;      // requests in its engine now
};

std::string encode_replica_info(const ReplicaInfo& info);
ReplicaInfo parse_replica_info(std::string_view body);

}  // namespace kvgate::wire
