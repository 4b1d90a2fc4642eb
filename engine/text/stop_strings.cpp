// Thread ownership: a StopStrings belongs to its one stream's consumer.
#include "engine/text/stop_strings.h"

#include <algorithm>

namespace kvgate {

StopStrings::StopStrings(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

StopStrings::Step StopStrings::push(std::string_view piece) {
  Step step;
  if (stopped_) return step;
  held_.append(piece);

  // held_ had no whole match before this piece, so any match ends inside it;
  // the first match to end is the one a character-by-character stream sees.
  size_t best_end = std::string::npos, best_start = 0;
  const std::string* best = nullptr;
  for (const std::string& s : stops_) {
    size_t at = held_.find(s);
    if (at == std::string::npos) continue;
    size_t end = at + s.size();
    if (!best || end < best_end || (end == best_end && at < best_start)) {
      best = &s;
      best_end = end;
      best_start = at;
    }
  }
  if (best) {
    step.emit = held_.substr(0, best_start);
    step.stopped = stopped_ = true;
    step.matched = matched_ = *best;
    held_.clear();
    return step;
  }

  // Stop strings are whole UTF-8, so a held suffix that equals a prefix of
  // one starts on a character boundary: the emitted text never splits a
  // character that arrived whole.
  size_t keep = held_suffix_length();
  step.emit = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return step;
}

std::string StopStrings::flush() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

size_t StopStrings::held_suffix_length() const {
  size_t longest = 0;
  const std::string_view held(held_);
  for (const std::string& s : stops_) {
    // Proper prefixes only: a whole stop string would have matched.
    for (size_t len = std::min(s.size() - 1, held.size()); len > longest; --len)
      if (held.ends_with(std::string_view(s).substr(0, len))) {
        longest = len;
        break;
      }
  }
  return longest;
}

}  // namespace kvgate
