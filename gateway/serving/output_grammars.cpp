#include "gateway/serving/output_grammars.h"

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/text/vocabulary_masker.h"

namespace kvgate::serving {

OutputGrammars::OutputGrammars(const Tokenizer& tokenizer) : masker_(vocabulary_masker(tokenizer)) {}

grammar::OutputGrammar OutputGrammars::compile(const boost::json::value& spec) {
  return {cache_.get(spec), masker_, boost::json::serialize(spec)};
}

grammar::OutputGrammar OutputGrammars::compile(std::string_view spec_text) {
  if (spec_text.size() > grammar::SchemaCaps{}.max_schema_bytes)
    throw Error("the output grammar's spec is over " + std::to_string(grammar::SchemaCaps{}.max_schema_bytes) + " bytes");
  boost::system::error_code ec;
  const boost::json::value spec = boost::json::parse(spec_text, ec);
  if (ec) throw Error("the output grammar's spec is not JSON: " + ec.message());
  return compile(spec);
}

}  // namespace kvgate::serving
