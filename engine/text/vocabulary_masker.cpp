#include "engine/text/vocabulary_masker.h"

#include <string>
#include <vector>

namespace kvgate {
namespace {

// Masks kept for states that recur (token_mask.h): 64 MiB is about 10,000
// masks of a 50k vocabulary, 4,000 of a 128k one.
constexpr size_t kMaskCacheBytes = size_t{64} << 20;

}  // namespace

std::shared_ptr<const grammar::TokenMasker> vocabulary_masker(const Tokenizer& tokenizer) {
  const int32_t n = tokenizer.n_vocab();
  std::vector<std::string> bytes;
  bytes.reserve(static_cast<size_t>(n));
  std::vector<TokenId> banned;
  for (TokenId id = 0; id < n; ++id) {
    bytes.push_back(tokenizer.token_bytes(id));
    if (tokenizer.is_control(id) || (tokenizer.is_eog(id) && id != tokenizer.eos())) banned.push_back(id);
  }
  return std::make_shared<const grammar::TokenMasker>(bytes, tokenizer.eos(), banned, kMaskCacheBytes);
}

}  // namespace kvgate
