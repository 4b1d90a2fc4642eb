#include "engine/grammar/grammar_spec.h"

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/grammar/compose.h"

namespace kvgate::grammar {

namespace json = boost::json;

namespace {

// Sequences and choices inside each other: a tool call needs two levels.
constexpr int kMaxSpecDepth = 8;

std::shared_ptr<const Grammar> compile_at(const json::value& spec, const SchemaCaps& caps, int depth) {
  if (depth > kMaxSpecDepth) throw Error("grammar spec: nested deeper than " + std::to_string(kMaxSpecDepth));
  const json::object* o = spec.if_object();
  if (!o || o->size() != 1) throw Error("grammar spec: expected an object with one key");
  const auto& [key, value] = *o->begin();
  if (key == "json_schema") return compile_json_schema(value, caps);
  if (key == "json_object") return compile_any_json_object(caps);
  if (key == "literal") {
    if (!value.is_string() || value.get_string().empty()) throw Error("grammar spec: a literal must be a non-empty string");
    return sequence({{std::string(value.get_string()), nullptr}});
  }
  if (key == "sequence" || key == "choice") {
    const json::array* parts = value.if_array();
    if (!parts || parts->empty()) throw Error("grammar spec: " + std::string(key) + " needs a non-empty array");
    std::vector<std::shared_ptr<const Grammar>> compiled;
    for (const json::value& p : *parts) compiled.push_back(compile_at(p, caps, depth + 1));
    if (key == "choice") return choice(compiled);
    std::vector<Part> seq;
    for (auto& g : compiled) seq.push_back({"", std::move(g)});
    return sequence(seq);
  }
  throw Error("grammar spec: unknown form '" + std::string(key) + "'");
}

}  // namespace

std::shared_ptr<const Grammar> compile_spec(const json::value& spec, const SchemaCaps& caps) {
  return compile_at(spec, caps, 0);
}

}  // namespace kvgate::grammar
