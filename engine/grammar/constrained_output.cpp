#include "engine/grammar/constrained_output.h"

#include <algorithm>
#include <limits>

namespace kvgate::grammar {

ConstrainedOutput::ConstrainedOutput(const OutputGrammar& g) : masker_(g.masker), matcher_(g.grammar) {}

size_t ConstrainedOutput::mask(std::span<float> logits) {
  masker_->fill(matcher_, allowed_);
  constexpr float kOff = -std::numeric_limits<float>::infinity();
  const std::vector<uint64_t>& words = allowed_.words();
  size_t n = 0;
  for (size_t w = 0; w < words.size(); ++w) {
    const size_t base = w * 64;
    const size_t end = std::min(logits.size(), base + 64);
    if (words[w] == ~uint64_t{0} && end - base == 64) {
      n += 64;
      continue;
    }
    for (size_t i = base; i < end; ++i) {
      if ((words[w] >> (i - base)) & 1) ++n;
      else logits[i] = kOff;
    }
  }
  for (size_t i = words.size() * 64; i < logits.size(); ++i) logits[i] = kOff;  // past the vocabulary
  return n;
}

bool ConstrainedOutput::accept(TokenId id) {
  if (!masker_->accept_token(matcher_, id)) return false;
  if (id == masker_->eos()) ended_ = true;
  return true;
}

}  // namespace kvgate::grammar
