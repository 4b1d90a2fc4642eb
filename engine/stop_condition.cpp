#include "engine/stop_condition.h"

#include <algorithm>

#include "engine/error.h"

namespace kvgate {

std::string_view finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kNone: break;
  }
  return "";
}

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

TokenLimit::TokenLimit(int32_t max_tokens, std::vector<TokenId> stop_ids)
    : max_tokens_(max_tokens), stop_ids_(std::move(stop_ids)) {
  if (max_tokens_ < 1) throw Error("max_tokens must be at least 1, got " + std::to_string(max_tokens_));
}

FinishReason TokenLimit::on_token(TokenId t) {
  ++generated_;
  if (std::find(stop_ids_.begin(), stop_ids_.end(), t) != stop_ids_.end()) return FinishReason::kStop;
  if (generated_ >= max_tokens_) return FinishReason::kLength;
  return FinishReason::kNone;
}

}  // namespace kvgate
