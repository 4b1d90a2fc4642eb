// Request strings marked, renders to ids with control tokens only from the
// template's markup. Pure; any thread.
#include "gateway/openai/prompt_encoder.h"

#include <algorithm>

#include "engine/tokenizer/utf8.h"
#include "gateway/template/text_mark.h"

namespace kvgate::openai {

using jinja::kTextMark;

namespace {

std::string piece_or_empty(const Tokenizer& t, TokenId id) {
  return id == kNoToken ? std::string() : std::string(t.piece(id));
}

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

void PromptEncoder::TokenSet::add(std::string text, TokenId id) {
  first_byte[static_cast<unsigned char>(text.front())] = true;
  last_byte[static_cast<unsigned char>(text.back())] = true;
  longest = std::max(longest, text.size());
  tokens.push_back(SpecialToken{std::move(text), id});
}

void PromptEncoder::TokenSet::sort() {
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
}

const PromptEncoder::SpecialToken* PromptEncoder::TokenSet::match(std::string_view text, std::size_t i) const {
  if (!first_byte[static_cast<unsigned char>(text[i])]) return nullptr;
  for (const SpecialToken& t : tokens)
    if (text.compare(i, t.text.size(), t.text) == 0) return &t;
  return nullptr;
}

bool PromptEncoder::TokenSet::starts_one(std::string_view text, std::size_t i) const {
  if (!first_byte[static_cast<unsigned char>(text[i])]) return false;
  const std::string_view tail = text.substr(i);
  for (const SpecialToken& t : tokens)
    if (t.text.size() > tail.size() && t.text.starts_with(tail)) return true;
  return false;
}

bool PromptEncoder::TokenSet::ends_one(std::string_view text, std::size_t end) const {
  if (!last_byte[static_cast<unsigned char>(text[end - 1])]) return false;
  const std::string_view head = text.substr(0, end);
  for (const SpecialToken& t : tokens)
    if (t.text.size() > head.size() && t.text.ends_with(head)) return true;
  return false;
}

PromptEncoder::PromptEncoder(const Tokenizer& tokenizer, std::string_view template_markup) : tokenizer_(tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  for (TokenId id = 0; id < tokenizer.n_vocab(); ++id) {
    const TokenType type = vocab.type(id);
    // The tokens the tokenizer's splitter knows (special_tokens.h).
    const bool user_defined = type == TokenType::UserDefined;
    if (type != TokenType::Control && type != TokenType::Unknown && !user_defined) continue;
    std::string text(tokenizer.piece(id));
    if (text.empty()) continue;
    if (!user_defined || template_markup.find(text) != std::string_view::npos) guarded_.add(text, id);
    special_.add(std::move(text), id);
  }
  special_.sort();
  guarded_.sort();
  scan_stop_ = special_.first_byte;
  scan_stop_[static_cast<unsigned char>(kTextMark.front())] = true;
  template_tokens_.bos = piece_or_empty(tokenizer, tokenizer.bos());
  template_tokens_.eos = piece_or_empty(tokenizer, tokenizer.eos());
}

std::string PromptEncoder::protect(std::string_view text) const {
  const std::size_t n = text.size();
  std::vector<std::size_t> marks;  // byte offsets of the characters to mark, ascending
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (!guarded_.first_byte[b] && b != static_cast<unsigned char>(kTextMark.front())) continue;
    if (guarded_.match(text, i) || text.compare(i, kTextMark.size(), kTextMark) == 0) marks.push_back(i);
  }
  const std::size_t longest = guarded_.longest;
  if (longest > 1) {
    // A guarded token's ending at the start: mark its last character.
    for (std::size_t end = 1; end < std::min(n + 1, longest); ++end) {
      if (!guarded_.ends_one(text, end)) continue;
      std::size_t c = end - 1;
      while (c > 0 && is_continuation(text[c])) --c;
      marks.push_back(c);
    }
    // A guarded token's beginning at the end: mark its first character.
    for (std::size_t i = n > longest ? n - longest + 1 : 0; i < n; ++i)
      if (guarded_.starts_one(text, i)) marks.push_back(i);
  }
  if (marks.empty()) return std::string(text);
  std::sort(marks.begin(), marks.end());
  marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
  std::string out;
  out.reserve(n + marks.size() * kTextMark.size());
  std::size_t from = 0;
  for (std::size_t m : marks) {
    out.append(text, from, m - from);
    out += kTextMark;
    from = m;
  }
  out.append(text, from, n - from);
  return out;
}

void PromptEncoder::flush(std::string& raw, Tokens& out) const {
  if (raw.empty()) return;
  const Tokens ids = tokenizer_.encode(raw, {.add_bos = false, .parse_special = false, .split_user_defined = false});
  out.insert(out.end(), ids.begin(), ids.end());
  raw.clear();
}

std::size_t PromptEncoder::next_special(std::string_view text, std::size_t from) const {
  while (from < text.size() && !scan_stop_[static_cast<unsigned char>(text[from])]) ++from;
  return from;
}

Tokens PromptEncoder::encode(std::string_view rendered) const {
  Tokens out = encode_tail(rendered);
  const TokenId bos = tokenizer_.bos();
  if (out.empty() || bos == kNoToken || out.front() != bos) {
    const Tokens prefix = tokenizer_.encode("", {.add_bos = true, .parse_special = false});
    out.insert(out.begin(), prefix.begin(), prefix.end());
  }
  return out;
}

Tokens PromptEncoder::encode_tail(std::string_view rendered) const {
  Tokens out;
  std::string raw;
  raw.reserve(rendered.size());
  for (std::size_t i = 0; i < rendered.size();) {
    if (const std::size_t next = next_special(rendered, i); next > i) {  // plain text up to a possible mark or control
      raw.append(rendered, i, next - i);
      i = next;
      continue;
    }
    if (rendered.compare(i, kTextMark.size(), kTextMark) == 0) {
      // A marked character is text; a mark with nothing after it (its
      // character cut off by the template) stands for nothing.
      i += kTextMark.size();
      if (i == rendered.size()) break;
      const std::size_t len = std::min(utf8_lead_length(static_cast<unsigned char>(rendered[i])), rendered.size() - i);
      raw.append(rendered, i, len);
      i += len;
      continue;
    }
    if (const SpecialToken* c = special_.match(rendered, i)) {
      flush(raw, out);
      out.push_back(c->id);
      i += c->text.size();
      continue;
    }
    raw += rendered[i++];
  }
  flush(raw, out);
  return out;
}

}  // namespace kvgate::openai
