// One request's output held to a grammar, step by step: before each token
// is drawn, every logit whose token cannot continue a valid output is set
// to -inf (TokenMasker); after, the drawn token advances the matcher. The
// output is done when the matcher holds a whole value that nothing can
// extend (a closed object), or when EOS was drawn, which the mask allows
// only once the value is whole.
//
// The grammar and the vocabulary's masker are shared by every request that
// uses them; the matcher and the mask are this request's.
//
// Thread ownership: the thread that samples the request (the engine loop).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "cache/ids.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/matcher.h"
#include "engine/grammar/token_mask.h"

namespace kvgate::grammar {

// What a request asks the engine to hold its output to.
struct OutputGrammar {
  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<const TokenMasker> masker;  // of the model's vocabulary
  std::string spec;  // what `grammar` was compiled from (grammar_spec.h), for a replica to compile again
};

class ConstrainedOutput {
 public:
  explicit ConstrainedOutput(const OutputGrammar& g);

  // Sets the logit of every token that may not come next to -inf; returns
  // how many may (0 only for a vocabulary that cannot spell what the
  // grammar needs next). `logits` has one entry per token of the masker's
  // vocabulary.
  size_t mask(std::span<float> logits);
  // Advances by the drawn token: false (and nothing changes) if the mask
  // did not allow it.
  bool accept(TokenId id);
  // A whole value was read and nothing may follow it, or EOS was accepted.
  bool done() const { return ended_ || (matcher_.complete() && !matcher_.can_continue()); }
  TokenId eos() const { return masker_->eos(); }

 private:
  std::shared_ptr<const TokenMasker> masker_;
  Matcher matcher_;
  TokenMask allowed_;
  bool ended_ = false;
};

}  // namespace kvgate::grammar
