// GPT-2's vocabulary as byte strings, read from ../shared's GGUF for the
// grammar tests and benchmark: the GGUF stores byte-level BPE tokens in
// GPT-2's printable alphabet (bytes_to_unicode), which is undone here, as
// the tokenizer does, so the grammar library sees the bytes a token emits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cache/ids.h"
#include "engine/model/gguf.h"

namespace kvgate::testing {

struct ByteVocab {
  std::vector<std::string> tokens;
  std::vector<TokenId> special;  // control tokens: never text
  TokenId eos = -1;
};

inline ByteVocab load_gpt2_byte_vocab(const std::string& path) {
  std::map<uint32_t, uint8_t> unicode_to_byte;
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    unicode_to_byte[printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++)] = static_cast<uint8_t>(b);
  }
  const auto f = GgufFile::open(path);
  const GgufArray& toks = f->get_array("tokenizer.ggml.tokens");
  ByteVocab v;
  for (size_t i = 0; i < toks.size(); ++i) {
    const std::string s = std::get<std::string>(toks.at(i).v);
    std::string bytes;
    for (size_t k = 0; k < s.size();) {
      const auto c = static_cast<unsigned char>(s[k]);
      const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      uint32_t cp = len == 1 ? c : c & (0x7F >> len);
      for (int j = 1; j < len && k + static_cast<size_t>(j) < s.size(); ++j) cp = (cp << 6) | (s[k + static_cast<size_t>(j)] & 0x3F);
      k += static_cast<size_t>(len);
      const auto it = unicode_to_byte.find(cp);
      bytes += it == unicode_to_byte.end() ? '?' : static_cast<char>(it->second);
    }
    v.tokens.push_back(bytes);
  }
  if (f->has("tokenizer.ggml.token_type")) {
    const GgufArray& types = f->get_array("tokenizer.ggml.token_type");
    for (size_t i = 0; i < types.size(); ++i) {
      const GgufValue t = types.at(i);
      const int64_t type = t.v.index() == 0 ? static_cast<int64_t>(std::get<uint64_t>(t.v)) : std::get<int64_t>(t.v);
      if (type == 3) v.special.push_back(static_cast<TokenId>(i));  // CONTROL
    }
  }
  v.eos = static_cast<TokenId>(f->get_uint("tokenizer.ggml.eos_token_id"));
  return v;
}

}  // namespace kvgate::testing
