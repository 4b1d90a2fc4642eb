#include "engine/text/vocabulary_masker.h"

#include <algorithm>
#include <vector>

namespace kvgate {

namespace {
constexpr char kMarkerByte = '\xFF';  // never in UTF-8
}  // namespace

std::string marker_bytes(std::string_view marker) {
  std::string out(1, kMarkerByte);
  out.append(marker);
  out.push_back(kMarkerByte);
  return out;
}

std::shared_ptr<const grammar::TokenMasker> vocabulary_masker(const Tokenizer& tokenizer,
                                                              std::span<const std::string_view> markers, size_t cache_bytes) {
  const int32_t n = tokenizer.n_vocab();
  std::vector<std::string> bytes;
  bytes.reserve(static_cast<size_t>(n));
  for (TokenId id = 0; id < n; ++id) bytes.push_back(tokenizer.token_bytes(id));
  std::vector<bool> marker(static_cast<size_t>(n), false);
  for (std::string_view m : markers) {
    const TokenId id = tokenizer.vocab().find(m);
    if (id == kNoToken || !tokenizer.is_control(id)) continue;  // an ordinary token is its text already
    bytes[static_cast<size_t>(id)] = marker_bytes(m);
    marker[static_cast<size_t>(id)] = true;
  }
  const bool any_marker = std::find(marker.begin(), marker.end(), true) != marker.end();
  std::vector<TokenId> banned;
  for (TokenId id = 0; id < n; ++id) {
    const size_t i = static_cast<size_t>(id);
    const bool control = tokenizer.is_control(id) && !marker[i];
    // Only a marker's own token may spell its bytes.
    const bool spells_marker = any_marker && !marker[i] && bytes[i].find(kMarkerByte) != std::string::npos;
    if (control || spells_marker || (tokenizer.is_eog(id) && id != tokenizer.eos())) banned.push_back(id);
  }
  return std::make_shared<const grammar::TokenMasker>(bytes, tokenizer.eos(), banned, cache_bytes);
}

}  // namespace kvgate
