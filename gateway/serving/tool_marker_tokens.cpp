// Tool-call markers as ordinary tokens that spell them. Pure.
#include "gateway/serving/tool_marker_tokens.h"

#include <string>

namespace kvgate::serving {
namespace {

std::string bytes_of(const Tokenizer& tokenizer, std::span<const TokenId> ids) {
  std::string out;
  for (TokenId id : ids) out += tokenizer.token_bytes(id);
  return out;
}

// Ordinary tokens whose bytes are exactly `text`. SentencePiece's encoder
// adds a dummy-prefix space at the start of the text, which may merge into
// the first piece ("▁["): then the text is encoded after a newline, and the
// tokens after the newline's are taken.
Tokens spelled(const Tokenizer& tokenizer, std::string_view text) {
  const Tokenizer::EncodeOptions plain{.add_bos = false, .parse_special = false, .split_user_defined = false};
  Tokens ids = tokenizer.encode(text, plain);
  if (bytes_of(tokenizer, ids) == text) return ids;
  std::string after_newline = "\n";  // appended, not "\n" + text: gcc 12's -Wrestrict misfires on that
  after_newline.append(text);
  ids = tokenizer.encode(after_newline, plain);
  for (std::size_t from = 1; from < ids.size(); ++from) {
    const std::span<const TokenId> tail(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.end());
    if (bytes_of(tokenizer, tail) == text) return Tokens(tail.begin(), tail.end());
  }
  return {};
}

}  // namespace

ToolMarkerTokens::ToolMarkerTokens(const Tokenizer& tokenizer, std::span<const std::string_view> markers) {
  for (std::string_view m : markers) {
    const TokenId id = tokenizer.vocab().find(m);
    if (id == kNoToken || !tokenizer.is_control(id)) continue;
    Tokens ids = spelled(tokenizer, m);
    if (!ids.empty()) text_.emplace(id, std::move(ids));
  }
}

const Tokens* ToolMarkerTokens::text_of(TokenId id) const {
  const auto it = text_.find(id);
  return it == text_.end() ? nullptr : &it->second;
}

}  // namespace kvgate::serving
