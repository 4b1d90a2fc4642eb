// The two ways a /v1/messages answer reaches its client, as Sinks of the
// pipeline, Anthropic's twins of reply_sinks.h: MessageWholeSink gathers
// the text and sends one message object when the request ends;
// MessageStreamSink sends Anthropic's events (anthropic/stream_events.h) as
// the text comes. A request that offered tools has its reply read for calls
// (openai/tool_call_parser.h), which become tool_use blocks.
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
#include "gateway/anthropic/message_response.h"
#include "gateway/anthropic/stream_events.h"
#include "gateway/openai/tool_call_parser.h"
#include "gateway/server/reply.h"
#include "gateway/serving/reply_sinks.h"

namespace kvgate::serving {

class MessageWholeSink final : public WholeReply {
 public:
  MessageWholeSink(server::Reply reply, anthropic::MessageMeta meta, server::HttpHeaders headers,
                   std::optional<openai::ToolCallContext> tools = std::nullopt, ToolReplyCounter count = {})
      : WholeReply(std::move(reply), std::move(headers), std::move(tools), std::move(count)), meta_(std::move(meta)) {}

 private:
  Response answer(const Served& served, const std::string& text) const override;

  const anthropic::MessageMeta meta_;
};

class MessageStreamSink final : public StreamReply {
 public:
  // `prompt_tokens`: for message_start's usage (stream_events.h).
  MessageStreamSink(server::Reply reply, anthropic::MessageMeta meta, uint64_t prompt_tokens,
                    server::HttpHeaders headers, std::optional<openai::ToolCallContext> tools = std::nullopt,
                    ToolReplyCounter count = {})
      : StreamReply(std::move(reply), std::move(headers)),
        prompt_tokens_(prompt_tokens),
        count_(std::move(count)),
        events_(std::move(meta)) {
    if (tools) tools_.emplace(std::move(*tools));
  }

 private:
  std::vector<std::string> opening() override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void text(std::string_view text) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void done(const Served& served) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void send_step(const openai::ToolCallStream::Step& step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint64_t prompt_tokens_;
  const ToolReplyCounter count_;
  anthropic::MessageEvents events_ ABSL_GUARDED_BY(mu_);
  std::optional<openai::ToolCallStream> tools_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::serving
