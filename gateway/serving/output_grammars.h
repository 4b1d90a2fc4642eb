// The server's half of constrained decoding: the model's vocabulary masker,
// built once at start, and the compiled grammars, cached by their spec's
// canonical text, so an agent loop that sends the same schema or tool list
// every turn compiles it once. The HTTP API compiles a chat request's
// constraint here (structured_output.h says what it is) and a replica
// compiles again what its front sends.
//
// A forced call in a format whose markers are control tokens (Mistral's
// [TOOL_CALLS], DeepSeek's <｜tool▁sep｜>, ...) names its format in the spec
// (openai::marked_grammar). Its markup is compiled with each marker that is
// a control token of this vocabulary written as that token (the literals'
// marker texts become vocabulary_masker's marker_bytes), and masked with a
// masker of its own that allows those tokens there and nowhere else. The
// markers are openai::tool_call_markers, the list ToolMarkerTokens decodes
// as text for the same requests. One masker per format, built on its first
// request (tens of milliseconds); a vocabulary in which no marker is a
// control token shares the plain one.
//
// Thread-safe: compile() from any I/O thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "engine/grammar/constrained_output.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/openai/tool_call_parser.h"

namespace kvgate::serving {

class OutputGrammars {
 public:
  // `tokenizer` outlives this.
  explicit OutputGrammars(const Tokenizer& tokenizer);

  // Throws kvgate::Error naming what does not compile (a schema's keyword
  // and its path, a recursive $ref, a schema over 1 MB).
  grammar::OutputGrammar compile(const boost::json::value& spec);
  // The same from a spec's text, as a front sends it.
  grammar::OutputGrammar compile(std::string_view spec_text);

  const grammar::GrammarCache& cache() const { return cache_; }

 private:
  // A format's markers that are control tokens here, and the masker that writes them as tokens.
  struct MarkerMasker {
    std::vector<std::string_view> markers;
    std::shared_ptr<const grammar::TokenMasker> masker;
  };
  const MarkerMasker& marker_masker(openai::ToolCallFormat format);

  const Tokenizer& tokenizer_;
  grammar::GrammarCache cache_;
  const std::shared_ptr<const grammar::TokenMasker> masker_;
  std::mutex mu_;  // guards marker_maskers_ (whose entries, once made, never change)
  std::map<openai::ToolCallFormat, MarkerMasker> marker_maskers_;
};

}  // namespace kvgate::serving
