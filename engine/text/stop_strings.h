// StopStrings: where a generation's text ends, and which of it the client
// may see. It watches the decoded text as it streams. Like the OpenAI API,
// a matched stop string and everything after it are never emitted. Text that
// could still turn out to be the start of a stop string (the longest suffix
// of what arrived that is a proper prefix of one) is held back until the
// next piece decides it. Which stop matches, and what is emitted before it,
// do not depend on how the text was cut into pieces: the match that ends
// first wins (on a tie, the one that starts first).
//
// Cost: linear in the text, whatever the stop strings: each keeps a
// Knuth-Morris-Pratt state (the longest prefix of it that the text ends
// with) advanced byte by byte, which is also the held-back length. Searching
// the held text again for every piece was quadratic in a stop string's
// length, on the thread that streams every request's tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate {

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
  struct Stop {
    std::string text;
    std::vector<uint32_t> fail;  // KMP: fail[i], the longest proper border of text[0..i]
    uint32_t state = 0;          // the longest prefix of text that the text so far ends with
    void advance(char c);
  };

  std::vector<Stop> stops_;
  std::string held_;  // arrived but not yet emitted
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace kvgate
