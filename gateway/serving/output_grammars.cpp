#include "gateway/serving/output_grammars.h"

#include <span>
#include <string>

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/text/vocabulary_masker.h"
#include "gateway/openai/structured_output.h"

namespace kvgate::serving {

OutputGrammars::OutputGrammars(const Tokenizer& tokenizer)
    : tokenizer_(tokenizer), masker_(vocabulary_masker(tokenizer)) {}

namespace {

// `spec` (a grammar spec) with every marker text in its literals written as
// the marker's token: its marker_bytes. The arguments' schemas are left as
// they are: a marker's text there is text.
boost::json::value with_marker_tokens(const boost::json::value& spec, std::span<const std::string_view> markers) {
  const boost::json::object* o = spec.if_object();
  if (!o || o->size() != 1) return spec;
  const auto& [key, value] = *o->begin();
  if (key == "literal" && value.is_string()) {
    std::string text(value.get_string());
    for (std::string_view m : markers) {
      const std::string token = marker_bytes(m);
      for (size_t at = text.find(m); at != std::string::npos; at = text.find(m, at + token.size()))
        text.replace(at, m.size(), token);
    }
    return boost::json::object{{"literal", text}};
  }
  if ((key == "sequence" || key == "choice") && value.is_array()) {
    boost::json::array parts;
    for (const boost::json::value& p : value.get_array()) parts.push_back(with_marker_tokens(p, markers));
    return boost::json::object{{key, std::move(parts)}};
  }
  return spec;
}

}  // namespace

const OutputGrammars::MarkerMasker& OutputGrammars::marker_masker(openai::ToolCallFormat format) {
  std::lock_guard lock(mu_);
  const auto found = marker_maskers_.find(format);
  if (found != marker_maskers_.end()) return found->second;
  MarkerMasker m;
  for (std::string_view text : openai::tool_call_markers(format)) {
    const TokenId id = tokenizer_.vocab().find(text);
    if (id != kNoToken && tokenizer_.is_control(id)) m.markers.push_back(text);
  }
  m.masker = m.markers.empty() ? masker_ : vocabulary_masker(tokenizer_, m.markers);
  return marker_maskers_.emplace(format, std::move(m)).first->second;
}

grammar::OutputGrammar OutputGrammars::compile(const boost::json::value& spec) {
  const openai::MarkedGrammar g = openai::marked_grammar(spec);
  if (!g.markers) return {cache_.get(spec), masker_, boost::json::serialize(spec)};
  const MarkerMasker& m = marker_masker(*g.markers);
  return {cache_.get(with_marker_tokens(g.grammar, m.markers)), m.masker, boost::json::serialize(spec)};
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
