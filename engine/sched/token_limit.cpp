// Thread ownership: a TokenLimit belongs to its sequence (the engine loop).
#include "engine/sched/token_limit.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace kvgate {

TokenLimit::TokenLimit(int32_t max_tokens, std::vector<TokenId> stop_ids)
    : max_tokens_(max_tokens), stop_ids_(std::move(stop_ids)) {
  if (max_tokens_ < 1) throw Error("max_tokens must be at least 1, got " + std::to_string(max_tokens_));
}

std::optional<FinishReason> TokenLimit::on_token(TokenId t) {
  ++generated_;
  if (std::find(stop_ids_.begin(), stop_ids_.end(), t) != stop_ids_.end()) return FinishReason::kStop;
  if (generated_ >= max_tokens_) return FinishReason::kLength;
  return std::nullopt;
}

}  // namespace kvgate
