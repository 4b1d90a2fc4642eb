// Rendered prompt to ids, control tokens only from markup. Pure; any thread.
#include "gateway/openai/prompt_encoder.h"

#include <algorithm>

namespace kvgate::openai {

namespace {

std::string piece_or_empty(const Tokenizer& t, TokenId id) {
  return id == kNoToken ? std::string() : std::string(t.piece(id));
}

}  // namespace

PromptEncoder::PromptEncoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  for (TokenId id = 0; id < tokenizer.n_vocab(); ++id) {
    const TokenType type = vocab.type(id);
    // The tokens parse_special lets the splitter match (special_tokens.h).
    if (type != TokenType::Control && type != TokenType::Unknown) continue;
    std::string text(tokenizer.piece(id));
    if (text.empty()) continue;
    starts_control_[static_cast<unsigned char>(text[0])] = true;
    controls_.push_back(ControlToken{std::move(text), id});
  }
  std::stable_sort(controls_.begin(), controls_.end(),
                   [](const ControlToken& a, const ControlToken& b) { return a.text.size() > b.text.size(); });
  template_tokens_.bos = piece_or_empty(tokenizer, tokenizer.bos());
  template_tokens_.eos = piece_or_empty(tokenizer, tokenizer.eos());
}

void PromptEncoder::flush(std::string& raw, Tokens& out) const {
  if (raw.empty()) return;
  const Tokens ids = tokenizer_.encode(raw, {.add_bos = false, .parse_special = false});
  out.insert(out.end(), ids.begin(), ids.end());
  raw.clear();
}

void PromptEncoder::encode_markup(std::string_view text, std::string& raw, Tokens& out) const {
  for (std::size_t i = 0; i < text.size();) {
    const ControlToken* match = nullptr;
    if (starts_control_[static_cast<unsigned char>(text[i])]) {
      for (const ControlToken& c : controls_) {
        if (text.compare(i, c.text.size(), c.text) == 0) {
          match = &c;
          break;
        }
      }
    }
    if (!match) {
      raw += text[i++];
      continue;
    }
    flush(raw, out);
    out.push_back(match->id);
    i += match->text.size();
  }
}

Tokens PromptEncoder::encode(const RenderedChat& chat) const {
  Tokens out;
  if (chat.starts_with_bos && tokenizer_.bos() != kNoToken) {
    out.push_back(tokenizer_.bos());
  } else {
    out = tokenizer_.encode("", {.add_bos = true, .parse_special = false});
  }
  std::string raw;
  for (const PromptSegment& seg : chat.segments) {
    if (seg.markup) {
      encode_markup(seg.text, raw, out);
    } else {
      raw += seg.text;
    }
  }
  flush(raw, out);
  return out;
}

}  // namespace kvgate::openai
