// Reading a streamed completion as a client: the SSE byte stream split into
// events (SseSplitter), and each event's data read as OpenAI's completion
// chunk (read_stream_frame), with the usage of the last chunk and kvgate's
// cost extension (gateway/openai/usage_report.h has the shape).
//
// The bytes come from the server under test, so nothing here trusts them:
// malformed JSON or fields of the wrong type make a frame kMalformed (the
// request is then counted failed, with the reason), never a crash.
//
// Not thread-safe (one splitter per response); read_stream_frame is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::loadgen {

// Splits "data: ...\n\n" events as they arrive, in pieces of any size. An
// event's data lines are joined with "\n" (the SSE rule); comment lines
// (":...") and other fields are dropped; "\r\n" line ends are accepted.
class SseSplitter {
 public:
  // Appends the data of every event completed by `bytes` to `out`.
  void feed(std::string_view bytes, std::vector<std::string>& out);
  // Bytes of an unfinished event (a stream that ends with some is cut short).
  size_t pending() const { return pending_.size() + event_.size() + has_event_; }

 private:
  std::string pending_;  // an unfinished line
  std::string event_;    // the data lines of the event being read
  bool has_event_ = false;
};

// What a usage chunk reports: OpenAI's fields and, when present, kvgate's.
struct StreamUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;                // prompt_tokens_details.cached_tokens
  std::optional<int64_t> cost_micros;       // kvgate.cost_micros
  std::optional<int64_t> fresh_prefill_tokens;
  bool operator==(const StreamUsage&) const = default;
};

struct StreamFrame {
  enum class Kind { kChunk, kDone, kError, kMalformed };
  Kind kind = Kind::kMalformed;
  bool has_choice = false;           // a chunk with a choice: a token's text arrived
  std::optional<StreamUsage> usage;  // the include_usage chunk
  std::string message;               // kError: the server's; kMalformed: what is wrong
};

StreamFrame read_stream_frame(std::string_view data);

}  // namespace kvgate::loadgen
