// The two ways a /v1/responses answer reaches its client, as Sinks of the
// pipeline, the Responses API's twins of reply_sinks.h: ResponseWholeSink
// gathers the text and sends one response object when the request ends;
// ResponseStreamSink sends the Responses events (openai/responses_events.h)
// as the text comes.
//
// Both keep the finished response (store: true) through a ResponseKeeper in
// on_done, on the blocking-pool thread that settles the request: after its
// ledger record and before its client hears the end, so a GET or a
// previous_response_id sent right after the answer finds it. A failed
// request is not kept (it has nothing to continue from).
//
// As with reply_sinks.h, nothing goes out before open() (a refusal is an
// HTTP error, not a stream), and what the engine produced before it is held.
//
// Thread ownership: on_placed before any text, on_text on the engine loop,
// on_done on a blocking-pool thread, open() on the I/O thread that started
// the request; what they share is guarded by mu_.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "gateway/openai/responses_events.h"
#include "gateway/openai/responses_object.h"
#include "gateway/server/reply.h"
#include "gateway/serving/reply_sinks.h"
#include "tenancy/response_store.h"

namespace kvgate::serving {

// Where a finished response is kept, and what rebuilding it later needs.
class ResponseKeeper {
 public:
  // Keeps nothing (store: false).
  ResponseKeeper() = default;
  // `store` outlives the request; `input` is the turn's own, encode_turn()'d.
  ResponseKeeper(tenancy::ResponseStore& store, std::string tenant, std::string input)
      : store_(&store), tenant_(std::move(tenant)), input_(std::move(input)) {}

  // Stores the response; a failure is logged, and the client still gets
  // its answer (generated and billed), which later reads will not find.
  // `output`: the ids the model generated for `text`.
  void keep(const openai::ResponseSettings& s, const std::string& text, const Tokens& output,
            const boost::json::object& object) const;

 private:
  tenancy::ResponseStore* store_ = nullptr;
  std::string tenant_;
  std::string input_;
};

class ResponseWholeSink final : public WholeReply {
 public:
  ResponseWholeSink(server::Reply reply, openai::ResponseSettings settings, ResponseKeeper keeper,
                    server::HttpHeaders headers)
      : WholeReply(std::move(reply), std::move(headers), std::nullopt, {}),
        settings_(std::move(settings)),
        keeper_(std::move(keeper)) {}

 private:
  Response answer(const Served& served, const std::string& text) const override;

  const openai::ResponseSettings settings_;
  const ResponseKeeper keeper_;
};

class ResponseStreamSink final : public StreamReply {
 public:
  ResponseStreamSink(server::Reply reply, openai::ResponseSettings settings, ResponseKeeper keeper,
                     server::HttpHeaders headers);

 private:
  void text(std::string_view text) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void done(const Served& served) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ResponseKeeper keeper_;
  openai::ResponseEvents events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::serving
