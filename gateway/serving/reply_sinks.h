// The two ways a request's output reaches its client over HTTP, as Sinks of
// the pipeline: WholeReplySink gathers the text and sends one JSON response
// when the request ends; StreamReplySink sends an SSE chunk per piece of
// text, then the finish, the usage chunk if asked, and [DONE]. A chat that
// offered tools has its reply read for tool calls (tool_call_parser.h):
// whole at the end, or, streamed, as it comes.
//
// A response's first bytes must not go out before the pipeline has accepted
// the request (a refusal is an HTTP error status, not a stream), yet the
// engine may produce text, or finish, before start() returns: what arrives
// before open() is held and sent by it. open() also takes the headers that
// can only be known once the request is admitted (the x-ratelimit-*
// windows with this request counted).
//
// On a route front each response names the replica it ran on
// (x-kvgate-replica; for a stream, the one first chosen: a retry happens
// before the first token, after the header went out).
//
// Thread ownership: on_placed before the request can produce anything,
// on_text on the engine loop, on_done on a blocking-pool thread, open() on
// the I/O thread that started the request; the state they share is guarded
// by mu_. Reply is itself thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/generation_options.h"
#include "gateway/openai/stream_chunk.h"
#include "gateway/openai/tool_call_parser.h"
#include "gateway/openai/usage_report.h"
#include "gateway/server/reply.h"
#include "gateway/serving/pipeline.h"

namespace kvgate::serving {

// Told once per reply read for tool calls, with what was found: "calls",
// "text" or "unparsed" (for kvgate_tool_calls_total).
using ToolReplyCounter = std::function<void(std::string_view outcome)>;

// The usage a client is shown, from the numbers the ledger recorded.
openai::UsageReport usage_report(const Served& s);

// What a client is told of a request that failed: not the detail (a
// ledger path, a replica's URL: the pipeline logged it), but its id.
openai::ApiError failure(const Served& s);

// Names the replica a request runs on (x-kvgate-replica) among `h`; the
// last placement wins (a retry before the first token moved it).
void set_replica(server::HttpHeaders& h, std::string_view where);

// A Sink that answers an HTTP request, holding its response until open():
// every API's whole and streamed sinks (these, message_sinks.h, responses_sinks.h).
class ReplySink : public Sink {
 public:
  // The request was accepted: `more` joins the response's headers, and
  // what was held goes out.
  virtual void open(server::HttpHeaders more = {}) = 0;
};

// A whole answer, for any API: the text gathered, then one JSON response
// made when the request ends (answer()), held until open() if it ends first.
class WholeReply : public ReplySink {
 public:
  // The request was accepted: `more` joins the headers, and the response
  // goes out now if the request has already ended.
  void open(server::HttpHeaders more = {}) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_text(std::string_view text) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_done(const Served& served) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_placed(std::string_view where) final ABSL_LOCKS_EXCLUDED(mu_);

 protected:
  struct Response {
    int status;
    std::string body;
  };
  WholeReply(server::Reply reply, server::HttpHeaders headers, std::optional<openai::ToolCallContext> tools,
             ToolReplyCounter count)
      : reply_(std::move(reply)), tools_(std::move(tools)), count_(std::move(count)), headers_(std::move(headers)) {}
  // The response to a request that ended (a failure included), `text` all it said.
  virtual Response answer(const Served& served, const std::string& text) const = 0;
  // `text` read for tool calls (and counted) when the request offered
  // tools; otherwise all of it is content.
  openai::ToolReply read_calls(const std::string& text) const;

 private:
  void send(Response r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  server::Reply reply_;
  const std::optional<openai::ToolCallContext> tools_;
  const ToolReplyCounter count_;
  Mutex mu_;
  server::HttpHeaders headers_ ABSL_GUARDED_BY(mu_);
  std::string text_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<Response> held_ ABSL_GUARDED_BY(mu_);  // the response, made before open()
};

// A streamed answer, for any API: server-sent events, each frame sent as
// it is made, or held until open() if the request was not accepted yet;
// the stream ends after the frames done() makes. Its subclasses make the
// frames, under mu_, which guards their state too.
class StreamReply : public ReplySink {
 public:
  // The request was accepted: the stream starts, with `more` among its
  // headers, then opening()'s frames, then what was held.
  void open(server::HttpHeaders more = {}) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_text(std::string_view text) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_done(const Served& served) final ABSL_LOCKS_EXCLUDED(mu_);
  void on_placed(std::string_view where) final ABSL_LOCKS_EXCLUDED(mu_);

 protected:
  StreamReply(server::Reply reply, server::HttpHeaders headers)
      : reply_(std::move(reply)), headers_(std::move(headers)) {}
  // Frames that lead the stream when it opens, before any held one (none
  // by default): made then, so only frames that need no numbering in the
  // order made.
  virtual std::vector<std::string> opening() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return {}; }
  // A piece of text's frames, sent with send().
  virtual void text(std::string_view text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  // The last frames of a request that ended (a failure included).
  virtual void done(const Served& served) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  void send(std::string frame) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void send(std::vector<std::string> frames) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Mutex mu_;

 private:
  server::Reply reply_;
  server::HttpHeaders headers_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // the last frame is made (maybe still held)
  std::vector<std::string> held_ ABSL_GUARDED_BY(mu_);  // frames made before open()
};

class WholeReplySink final : public WholeReply {
 public:
  WholeReplySink(server::Reply reply, openai::Endpoint endpoint, openai::ResponseMeta meta, server::HttpHeaders headers,
                 std::optional<openai::ToolCallContext> tools = std::nullopt, ToolReplyCounter count = {})
      : WholeReply(std::move(reply), std::move(headers), std::move(tools), std::move(count)),
        endpoint_(endpoint),
        meta_(std::move(meta)) {}

 private:
  Response answer(const Served& served, const std::string& text) const override;

  const openai::Endpoint endpoint_;
  const openai::ResponseMeta meta_;
};

class StreamReplySink final : public StreamReply {
 public:
  StreamReplySink(server::Reply reply, openai::Endpoint endpoint, openai::StreamContext ctx, server::HttpHeaders headers,
                  std::optional<openai::ToolCallContext> tools = std::nullopt, ToolReplyCounter count = {})
      : StreamReply(std::move(reply), std::move(headers)),
        endpoint_(endpoint),
        ctx_(std::move(ctx)),
        count_(std::move(count)) {
    if (tools) tools_.emplace(std::move(*tools));
  }

 private:
  std::vector<std::string> opening() override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void text(std::string_view text) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void done(const Served& served) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A tool-reading step's text and calls, as chunks.
  void send_step(const openai::ToolCallStream::Step& step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const openai::Endpoint endpoint_;
  const openai::StreamContext ctx_;
  const ToolReplyCounter count_;
  std::optional<openai::ToolCallStream> tools_ ABSL_GUARDED_BY(mu_);
  int calls_sent_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kvgate::serving
