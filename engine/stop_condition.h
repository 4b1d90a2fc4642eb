// When a generation ends, and which of its text the client may see.
//
// StopStrings watches the decoded text as it streams. Like the OpenAI API,
// a matched stop string and everything after it are never emitted. Text that
// could still turn out to be the start of a stop string (the longest suffix
// of what arrived that is a proper prefix of one) is held back until the
// next piece decides it. Which stop matches, and what is emitted before it,
// do not depend on how the text was cut into pieces: the match that ends
// first wins (on a tie, the one that starts first).
//
// TokenLimit ends a generation on a stop token (EOS) or at max_tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/token.h"

namespace kvgate {

// Why a generation ended, as the OpenAI API spells it ("stop", "length").
enum class FinishReason { kNone, kStop, kLength };
std::string_view finish_reason_name(FinishReason r);  // kNone -> ""

class StopStrings {
 public:
  // Empty strings are ignored (they would match before any text).
  explicit StopStrings(std::vector<std::string> stops = {});

  struct Step {
    std::string emit;     // safe to send now
    bool stopped = false;
    std::string matched;  // the stop string, when stopped
  };
  // Feeds the next decoded piece. After a stop, further pieces emit nothing.
  Step push(std::string_view piece);
  // The generation ended for another reason (EOS, length): the held-back
  // text is no longer a possible stop, so release it. Empty after a stop.
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  size_t held_suffix_length() const;

  std::vector<std::string> stops_;
  std::string held_;  // arrived but not yet emitted
  bool stopped_ = false;
  std::string matched_;
};

class TokenLimit {
 public:
  // max_tokens >= 1 (the caller turns "no limit" into what the context has
  // room for); stop_ids are EOS and any other ids that end a generation.
  TokenLimit(int32_t max_tokens, std::vector<TokenId> stop_ids);

  // Counts one generated token. kStop for a stop id (its text is not
  // emitted), else kLength when this token reaches max_tokens, else kNone.
  // A stop id wins over the limit, as in vLLM: the last token being EOS is
  // a natural stop.
  FinishReason on_token(TokenId t);

  int32_t generated() const { return generated_; }
  int32_t max_tokens() const { return max_tokens_; }

 private:
  int32_t max_tokens_;
  std::vector<TokenId> stop_ids_;
  int32_t generated_ = 0;
};

}  // namespace kvgate
