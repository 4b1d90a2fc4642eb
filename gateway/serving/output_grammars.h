// The server's half of constrained decoding: the model's vocabulary masker,
// built once at start, and the compiled grammars, cached by their spec's
// canonical text, so an agent loop that sends the same schema or tool list
// every turn compiles it once. The HTTP API compiles a chat request's
// constraint here (structured_output.h says what it is) and a replica
// compiles again what its front sends.
//
// Thread-safe: compile() from any I/O thread.
#pragma once

#include <memory>

#include <boost/json/value.hpp>

#include "engine/grammar/constrained_output.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate::serving {

class OutputGrammars {
 public:
  explicit OutputGrammars(const Tokenizer& tokenizer);

  // Throws kvgate::Error naming what does not compile (a schema's keyword
  // and its path, a recursive $ref, a schema over 1 MB).
  grammar::OutputGrammar compile(const boost::json::value& spec);
  // The same from a spec's text, as a front sends it.
  grammar::OutputGrammar compile(std::string_view spec_text);

  const grammar::GrammarCache& cache() const { return cache_; }

 private:
  grammar::GrammarCache cache_;
  const std::shared_ptr<const grammar::TokenMasker> masker_;
};

}  // namespace kvgate::serving
