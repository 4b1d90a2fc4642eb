// TextStream: a request's token ids as the text its client sees. Each token
// is decoded (never half a UTF-8 character: StreamDecoder), the text is cut
// at the first stop string (which is never shown: StopStrings), and the
// finish reason is the one a client is told. The CLI prints its pieces; the
// server's SSE writer sends them as chunks.
//
// Stop strings live here, not in the engine, which deals in token ids: when
// one matches, TextStream calls on_stop once, and the caller cancels the
// request (cancel-on-stop), so the engine stops spending tokens on it.
//
// Thread ownership: one per stream, driven by its consumer's thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cache/ids.h"
#include "engine/finish_reason.h"
#include "engine/text/stop_strings.h"
#include "engine/text/stream_decoder.h"

namespace kvgate {

class Tokenizer;

class TextStream {
 public:
  // continuation: the prompt already has text, so the first piece's leading
  // space is a real space (" world" after "Hello").
  TextStream(const Tokenizer& tokenizer, std::vector<std::string> stops, bool continuation,
             std::function<void()> on_stop = {});

  // One generated token; returns the text that is final now (maybe empty).
  // After a stop string matched, tokens still in flight add nothing.
  std::string push(TokenId token);
  // The request ended as the engine says: releases the held-back text.
  std::string finish(FinishReason engine_reason);

  bool stopped() const { return stops_.stopped(); }
  // A matched stop string is a stop, whatever the engine reports for the
  // cancelled request; otherwise the engine's reason. Valid after finish().
  FinishReason finish_reason() const { return reason_; }

 private:
  StreamDecoder decoder_;
  StopStrings stops_;
  std::function<void()> on_stop_;
  FinishReason reason_ = FinishReason::kStop;
};

}  // namespace kvgate
