// StreamDecoder: turns generated tokens into text as they arrive, for SSE.
//
// A token can end in the middle of a UTF-8 character (byte-fallback and
// byte-level BPE split multi-byte characters across tokens), and a client
// must never receive half a character. push() therefore returns only
// complete, well-formed characters and holds back a trailing incomplete one;
// finish() flushes what is held, an unfinished character as U+FFFD.
//
// Invariant: the concatenation of every push() and finish() equals
// utf8_sanitize(tokenizer.decode(all ids)), which is decode() itself whenever
// that is valid UTF-8. Not thread-safe: one decoder per stream.
#pragma once

#include <string>

#include "cache/ids.h"

namespace kvgate {

class Tokenizer;

class StreamDecoder {
 public:
  // at_text_start: the first piece begins the text, so SPM drops its
  // dummy-prefix space. False when continuing text that already has some
  // (a generation after a non-empty prompt), where that space is real.
  explicit StreamDecoder(const Tokenizer& tokenizer, bool at_text_start = true);

  std::string push(TokenId id);  // throws kvgate::Error for an id outside the vocabulary
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;  // at most 3 bytes: a valid, incomplete character
  bool at_start_ = true;
};

}  // namespace kvgate
