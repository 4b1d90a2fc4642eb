// Thread ownership: the stream's consumer (text_stream.h).
#include "engine/text/text_stream.h"

#include <utility>

namespace kvgate {

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<std::string> stops, bool continuation,
                       std::function<void()> on_stop)
    : decoder_(tokenizer, !continuation), stops_(std::move(stops)), on_stop_(std::move(on_stop)) {}

std::string TextStream::push(TokenId token) {
  if (stops_.stopped()) return {};
  StopStrings::Step s = stops_.push(decoder_.push(token));
  if (s.stopped && on_stop_) on_stop_();
  return std::move(s.emit);
}

std::string TextStream::finish(FinishReason engine_reason) {
  if (stops_.stopped()) {
    reason_ = FinishReason::kStop;
    return {};
  }
  // The decoder's held-back bytes can still complete a stop string.
  StopStrings::Step s = stops_.push(decoder_.finish());
  std::string out = std::move(s.emit);
  if (!s.stopped) out += stops_.flush();
  reason_ = s.stopped ? FinishReason::kStop : engine_reason;
  return out;
}

}  // namespace kvgate
