// TokenLimit: ends a generation on a stop token (EOS) or at max_tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cache/ids.h"
#include "engine/finish_reason.h"

namespace kvgate {

class TokenLimit {
 public:
  // max_tokens >= 1 (the caller turns "no limit" into what the context has
  // room for); stop_ids are EOS and any other ids that end a generation.
  TokenLimit(int32_t max_tokens, std::vector<TokenId> stop_ids);

  // Counts one generated token. kStop for a stop id (its text is not
  // emitted), else kLength when this token reaches max_tokens, else nothing.
  // A stop id wins over the limit, as in vLLM: the last token being EOS is
  // a natural stop.
  std::optional<FinishReason> on_token(TokenId t);

  int32_t generated() const { return generated_; }
  int32_t max_tokens() const { return max_tokens_; }

 private:
  int32_t max_tokens_;
  std::vector<TokenId> stop_ids_;
  int32_t generated_ = 0;
};

}  // namespace kvgate
