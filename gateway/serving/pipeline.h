// Pipeline: one request's life after the HTTP layer has parsed, authenticated
// and tokenized it: check it against the context, admit it against the
// tenant's quotas, submit it to the engine under the tenant's cache scope,
// turn its tokens into the client's text (stop strings cancel it), and when
// it ends settle the quotas and write its one ledger record before the
// client is told its usage, and count it in the metrics (and, when there is
// one, the access log) from the same numbers.
//
// Transport-independent: the output goes to a Sink (the HTTP reply, a test).
//
// Threads: start() on the caller's (an I/O thread); Sink::on_text on the
// engine loop (must not block); the settle, the ledger write and
// Sink::on_done on a BlockingPool thread. cancel() from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/engine_client.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/serving/access_log.h"
#include "gateway/serving/blocking_pool.h"
#include "gateway/serving/serving_metrics.h"
#include "gateway/serving/tool_marker_tokens.h"
#include "tenancy/tenancy.h"

namespace kvgate::serving {

struct ServeRequest {
  tenancy::Principal who;   // authenticated
  bool arrived = false;     // Tenancy::arrive counted it against requests/minute already
  std::string request_id;   // unique: the ledger's idempotence key
  std::string model;
  Tokens prompt;
  bool continuation = false;  // the prompt has text: the first piece's leading space is real
  SamplingParams sampling;
  int32_t max_tokens = 0;   // 0 = what the context leaves
  std::vector<std::string> stop;
  std::string cache_salt;   // narrows the tenant's scope, never widens it
  std::string prompt_cache_key;  // a placement hint on a front (empty: none)
  bool ignore_eos = false;
  int32_t priority = 0;
  // Prefixes of the prompt to keep pinned after it (none: no pin); each
  // written under a pin is billed at the write price of its ttl.
  std::vector<PinSpan> pins;
  std::optional<grammar::OutputGrammar> output_grammar;  // constrained decoding (none: free text)
  // A chat with tools: these control tokens reach the sink as their text,
  // for its tool-call parser (which keeps them from the client).
  const ToolMarkerTokens* tool_markers = nullptr;
};

// How a started request ended, as its client is told: the usage is the
// ledger record's, to the token.
struct Served {
  FinishReason finish = FinishReason::kStop;  // the client's: a matched stop string is a stop
  std::string stop_sequence;  // the stop string that ended it, if one did (Anthropic's stop_sequence)
  tenancy::TokenUsage usage;
  uint64_t cost_micros = 0;
  bool recorded = false;  // its ledger record was written (a request never admitted by the engine is not billed)
  bool pin_asked = false;      // it asked for its prompt to be pinned
  uint64_t pinned_tokens = 0;  // prompt tokens now pinned (billed as a cache write)
  bool pin_refused = false;    // the tenant's cache quota had no room for the pin
  Tokens output;          // the ids the model generated (a matched stop string's included, a stop id not)
  std::string error;      // the engine or the ledger failed: the operator's detail (logged), never the client's
  std::string request_id;  // what the client is told to quote instead
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Text that is final, in order (never half a character, never a stop string).
  virtual void on_text(std::string_view text) = 0;
  // Once, last, after the ledger record is durable.
  virtual void on_done(const Served& served) = 0;
  // Where the request runs, when not on this machine (a route front's
  // replica): before any text; again if a retry moves it, still before any text.
  virtual void on_placed(std::string_view where) { (void)where; }
};

// Why a request did not start. Nothing was billed and its quota slot is free.
struct NotStarted {
  // kBusy: the engine's queue is full; kUnavailable: the ledger cannot
  // write, so nothing is admitted until it can (both 503).
  enum class Why { kBadRequest, kQuota, kBusy, kUnavailable };
  Why why = Why::kBadRequest;
  std::string message;
  std::optional<tenancy::Refusal> quota;  // for kQuota: the limit, for 429 headers
};

class Pipeline {
 public:
  // `engine`: this machine's Engine, or a front's replicas. `billing`: the
  // pool that writes each finished request's record (blocking_pool.h),
  // which nothing else may share. `access_log`:
  // where each request's line goes once it is settled or refused (none
  // when null); it must outlive the pipeline.
  Pipeline(EngineClient& engine, tenancy::Tenancy& tenancy, const Tokenizer& tokenizer, BlockingPool& billing,
           ServingMetrics& metrics, AccessLog* access_log = nullptr);

  // Started: the engine's request id (for cancel()); otherwise why not.
  std::variant<RequestId, NotStarted> start(ServeRequest req, std::shared_ptr<Sink> sink);
  // The client went away: the request ends, its blocks go back, and what it
  // used is still recorded.
  void cancel(RequestId id) { engine_.cancel(id); }
  // Why the engine takes no more work (its backend failed), or empty: /health says so.
  std::string engine_failure() const { return engine_.failure(); }
  ServingMetrics& metrics() { return metrics_; }

 private:
  // Why a pin of a prefix this long cannot be admitted: the tenant's cache
  // quota, its pin quota or the server's cap on pins is full (a 429); none
  // when it fits, as far as the engine last said.
  std::optional<tenancy::Refusal> pin_refusal(const tenancy::QuotaLimits& quotas, TenantId label,
                                              size_t pinned_tokens) const;
  struct Flight;
  std::variant<RequestId, NotStarted> begin(ServeRequest req, std::shared_ptr<Sink> sink);
  void finish(const std::shared_ptr<Flight>& f, const Completion& done);

  EngineClient& engine_;
  tenancy::Tenancy& tenancy_;
  const Tokenizer& tokenizer_;
  BlockingPool& billing_;  // each finished request's ledger write, and nothing else
  ServingMetrics& metrics_;
  AccessLog* const access_log_;
};

}  // namespace kvgate::serving
