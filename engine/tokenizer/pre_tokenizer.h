// PreTokenizer: splits raw text into the words byte-level BPE merges within,
// selected by the vocabulary's `tokenizer.ggml.pre`.
//
// Each pre-tokenizer is an ordered list of regexes (the ones llama.cpp uses
// for that name, from the models' own tokenizer.json). They are applied one
// after another: every pass searches each piece left by the previous pass and
// cuts it into its matches AND the unmatched text between them, so the pieces
// always cover the input exactly, byte for byte. A pattern only ever sees its
// own piece (`$` means the end of the piece).
//
// Matching uses PCRE2 (UTF + UCP for \p{L}, \p{N}, \s; JIT-compiled), except
// that ASCII text under the GPT-2 pattern is decided by gpt2_ascii_match. Invalid
// UTF-8 is allowed: it matches no character class, so it ends up in the
// unmatched pieces and reaches BPE byte for byte (lossless).
// Thread-safe: the compiled patterns are read-only; match state is per thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate {

class PreTokenizer {
 public:
  // Throws kvgate::Error naming `name` if it is not a known pre-tokenizer.
  // An empty name (the key is absent, older converters) means "default".
  // fast_paths = false runs every pattern in PCRE2 alone (for tests that
  // check the hand-written ASCII matcher against it).
  explicit PreTokenizer(std::string_view name, bool fast_paths = true);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of `text` to `words`, in order; they point into `text`.
  void split(std::string_view text, std::vector<std::string_view>& words) const;

  const std::string& name() const { return name_; }
  // Llama 3 style: a word that is itself a vocabulary token is emitted whole,
  // without running the merges.
  bool ignore_merges() const { return ignore_merges_; }

  // Every name the constructor accepts, for messages and tests.
  static std::vector<std::string_view> known_names();

 private:
  class Pattern;
  std::string name_;
  bool ignore_merges_ = false;
  std::vector<std::unique_ptr<Pattern>> passes_;
};

}  // namespace kvgate
