// Thread ownership: a StopStrings belongs to its one stream's consumer.
#include "engine/text/stop_strings.h"

#include <algorithm>

namespace kvgate {

StopStrings::StopStrings(std::vector<std::string> stops) {
  for (std::string& text : stops) {
    if (text.empty()) continue;
    Stop s;
    s.fail.assign(text.size(), 0);
    for (uint32_t i = 1, k = 0; i < text.size(); ++i) {
      while (k > 0 && text[i] != text[k]) k = s.fail[k - 1];
      if (text[i] == text[k]) ++k;
      s.fail[i] = k;
    }
    s.text = std::move(text);
    stops_.push_back(std::move(s));
  }
}

void StopStrings::Stop::advance(char c) {
  while (state > 0 && text[state] != c) state = fail[state - 1];
  if (text[state] == c) ++state;
}

StopStrings::Step StopStrings::push(std::string_view piece) {
  Step step;
  if (stopped_) return step;
  const size_t base = held_.size();
  held_.append(piece);

  // Byte by byte, so the first match to end is the one a character-by-
  // character stream sees; of those ending together the longest starts first.
  for (size_t i = 0; i < piece.size(); ++i) {
    const Stop* hit = nullptr;
    for (Stop& s : stops_) {
      s.advance(piece[i]);
      if (s.state == s.text.size() && (!hit || s.text.size() > hit->text.size())) hit = &s;
    }
    if (!hit) continue;
    // The match's earlier bytes were a held partial match, so all of it is in held_.
    step.emit = held_.substr(0, base + i + 1 - hit->text.size());
    step.stopped = stopped_ = true;
    step.matched = matched_ = hit->text;
    held_.clear();
    return step;
  }

  // Stop strings are whole UTF-8, so a held suffix that equals a prefix of
  // one starts on a character boundary: the emitted text never splits a
  // character that arrived whole.
  size_t keep = 0;
  for (const Stop& s : stops_) keep = std::max<size_t>(keep, s.state);
  step.emit = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return step;
}

std::string StopStrings::flush() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace kvgate
