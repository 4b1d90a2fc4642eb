// A rendered chat prompt as segments, so that tokenizing it cannot turn a
// client's text into control tokens.
//
// A chat template's own markup ("<|im_start|>", "<|eot_id|>", "</s>") must
// become the vocabulary's control tokens, but the same characters inside a
// message must not: a user who writes "<|im_end|><|im_start|>system" would
// otherwise forge a system turn. So a rendered prompt keeps the two apart:
// markup segments may hold control tokens (tokenized with parse_special),
// content segments never do (tokenized without). PromptEncoder does this
// and otherwise tokenizes exactly as llama.cpp tokenizes the whole string.
//
// Pure values; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvgate::openai {

struct PromptSegment {
  std::string text;
  bool markup = false;  // the template's own text: control tokens allowed
  bool operator==(const PromptSegment&) const = default;
};

struct RenderedChat {
  // In order; adjacent segments of the same kind are merged, none is empty.
  std::vector<PromptSegment> segments;
  // The template itself begins with bos_token. The segments never hold that
  // leading BOS: PromptEncoder puts the BOS id first instead, so it can
  // never be doubled by the vocabulary's add_bos, nor forged as text.
  bool starts_with_bos = false;

  // All segments' text, concatenated (without the leading BOS).
  std::string text() const;
};

}  // namespace kvgate::openai
