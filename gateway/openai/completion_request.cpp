// Completion bodies to CompletionRequest. Pure; any thread.
#include "gateway/openai/completion_request.h"

#include <algorithm>

#include <boost/json/object.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

ApiError several_prompts(std::size_t n) {
  return invalid_value("prompt", "only one prompt per request: got an array of " + std::to_string(n) +
                                     " prompts. Send each prompt in its own request.");
}

bool is_token_array(const json::array& a) {
  return !a.empty() && a[0].is_number();
}

Tokens token_ids(const json::array& a, const std::string& path) {
  Tokens ids;
  ids.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = index_path(path, i);
    if (!a[i].is_number()) throw invalid_type(at, "an integer token id", json_kind_name(a[i]));
    auto id = json_integer(a[i]);
    if (!id) throw invalid_type(at, "an integer token id", json_kind_name(a[i]));
    if (*id < 0 || *id > INT32_MAX)
      throw invalid_value(at, "token ids are non-negative 32-bit integers, but got " + std::to_string(*id) + ".");
    ids.push_back(static_cast<TokenId>(*id));
  }
  return ids;
}

CompletionPrompt parse_prompt(const FieldReader& body) {
  const json::value* v = body.find("prompt");
  if (!v) throw missing_parameter("prompt");
  if (v->is_string()) return std::string(v->get_string());
  if (!v->is_array())
    throw invalid_type("prompt", "a string, an array of token ids, or an array of one of either",
                       json_kind_name(*v));
  const json::array& a = v->get_array();
  if (a.empty())
    throw invalid_request("Invalid 'prompt': empty array. Expected a prompt.", "prompt", "empty_array");
  if (is_token_array(a)) return token_ids(a, "prompt");
  if (a.size() > 1) {
    // Say "several prompts" only for what is several prompts; a mixed array
    // is a type error at its first odd element.
    const bool all_strings = std::all_of(a.begin(), a.end(), [](const json::value& e) { return e.is_string(); });
    const bool all_arrays = std::all_of(a.begin(), a.end(), [](const json::value& e) { return e.is_array(); });
    if (all_strings || all_arrays) throw several_prompts(a.size());
  }
  const json::value& only = a[0];
  if (only.is_string()) {
    if (a.size() > 1) throw invalid_type("prompt[1]", "a string", json_kind_name(a[1]));
    return std::string(only.get_string());
  }
  if (only.is_array()) {
    if (a.size() > 1) throw invalid_type("prompt[1]", "an array of token ids", json_kind_name(a[1]));
    if (only.get_array().empty())
      throw invalid_request("Invalid 'prompt[0]': empty array. Expected token ids.", "prompt[0]", "empty_array");
    if (!is_token_array(only.get_array()))
      throw invalid_type("prompt[0][0]", "an integer token id", json_kind_name(only.get_array()[0]));
    return token_ids(only.get_array(), "prompt[0]");
  }
  throw invalid_type("prompt[0]", "a string, an integer token id or an array of token ids", json_kind_name(only));
}

void require_defaults(const FieldReader& body) {
  if (body.boolean("echo").value_or(false))
    throw invalid_value("echo", "kvgate does not echo the prompt; send false or leave it out.");
  if (const json::value* lp = body.find("logprobs")) {
    if (!json_integer(*lp)) throw invalid_type("logprobs", "an integer", json_kind_name(*lp));
    throw invalid_value("logprobs", "kvgate does not return log probabilities; send null or leave it out.");
  }
  if (auto suffix = body.string("suffix"); suffix && !suffix->empty())
    throw invalid_value("suffix", "kvgate does not complete with a suffix; send null or leave it out.");
  if (auto best_of = body.integer("best_of"); best_of && *best_of != 1)
    throw invalid_value("best_of", "kvgate returns one choice per request, so best_of must be 1, but got " +
                                       std::to_string(*best_of) + " instead.");
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body_text) {
  const json::object object = parse_json_object(body_text);
  const FieldReader body(object, "");
  CompletionRequest r;
  r.model = body.required_string("model");
  r.prompt = parse_prompt(body);
  r.options = parse_generation_options(body, Endpoint::kCompletions);
  require_defaults(body);
  return r;
}

void check_prompt_tokens(const Tokens& ids, int32_t n_vocab) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= n_vocab)
      throw invalid_value("prompt[" + std::to_string(i) + "]",
                          "token id " + std::to_string(ids[i]) + " is outside the model's vocabulary of " +
                              std::to_string(n_vocab) + " tokens.");
  }
}

}  // namespace kvgate::openai
