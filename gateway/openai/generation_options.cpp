// The shared generation fields and their bounds. Pure; any thread.
#include "gateway/openai/generation_options.h"

#include <boost/json/value.hpp>

#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

std::string number_text(double d) {
  std::string s = std::to_string(d);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::optional<int32_t> token_count(const FieldReader& body, std::string_view key) {
  auto v = body.integer(key);
  if (!v) return std::nullopt;
  if (*v < 1 || *v > INT32_MAX)
    throw invalid_value(body.path(key), "expected an integer between 1 and 2147483647, but got " +
                                            std::to_string(*v) + " instead.");
  return static_cast<int32_t>(*v);
}

std::vector<std::string> stop_sequences(const FieldReader& body) {
  const json::value* v = body.find("stop");
  std::vector<std::string> out;
  if (!v) return out;
  auto bounded = [](const json::string& s, const std::string& path) {
    if (s.size() > kMaxStopBytes)
      throw invalid_value(path, "a stop sequence may be at most " + std::to_string(kMaxStopBytes) + " bytes, but got " +
                                    std::to_string(s.size()) + ".");
    return std::string(s);
  };
  if (v->is_string()) {
    if (!v->get_string().empty()) out.push_back(bounded(v->get_string(), "stop"));
    return out;
  }
  if (!v->is_array()) throw invalid_type("stop", "a string or an array of strings", json_kind_name(*v));
  const json::array& a = v->get_array();
  if (a.size() > static_cast<std::size_t>(kMaxStopSequences))
    throw invalid_value("stop", "expected at most 4 stop sequences, but got " + std::to_string(a.size()) +
                                    " instead.");
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw invalid_type("stop[" + std::to_string(i) + "]", "a string", json_kind_name(a[i]));
    if (!a[i].get_string().empty()) out.push_back(bounded(a[i].get_string(), "stop[" + std::to_string(i) + "]"));
  }
  return out;
}

void require_zero_penalty(const FieldReader& body, std::string_view key) {
  auto v = body.number(key);
  if (v && *v != 0)
    throw invalid_value(body.path(key), "kvgate does not apply " + std::string(key) +
                                            "; send 0 or leave it out.");
}

}  // namespace

GenerationOptions parse_generation_options(const FieldReader& body, Endpoint endpoint) {
  GenerationOptions o;

  o.max_tokens = token_count(body, "max_tokens");
  if (endpoint == Endpoint::kChatCompletions) {
    if (auto m = token_count(body, "max_completion_tokens")) o.max_tokens = m;
  }

  if (auto t = body.number("temperature")) {
    if (*t < 0 || *t > 2)
      throw invalid_value("temperature", "expected a number between 0 and 2, but got " + number_text(*t) +
                                             " instead.");
    o.temperature = static_cast<float>(*t);
  }
  if (auto p = body.number("top_p")) {
    // Judged as the float the sampler gets, so 1e-50 is not a top_p of 0.
    if (!(static_cast<float>(*p) > 0 && *p <= 1))
      throw invalid_value("top_p", "expected a number greater than 0 and at most 1, but got " + number_text(*p) +
                                       " instead.");
    o.top_p = static_cast<float>(*p);
  }
  if (auto k = body.integer("top_k")) {
    if (*k < -1 || *k > INT32_MAX)
      throw invalid_value("top_k", "expected -1 or 0 (off) or a positive integer, but got " + std::to_string(*k) +
                                       " instead.");
    o.top_k = *k <= 0 ? 0 : static_cast<int32_t>(*k);
  }
  o.seed = body.integer("seed");

  o.stop = stop_sequences(body);

  o.stream = body.boolean("stream").value_or(false);
  if (const json::value* so = body.find("stream_options")) {
    if (!so->is_object()) throw invalid_type("stream_options", "an object", json_kind_name(*so));
    if (!o.stream)
      throw invalid_request("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                            "stream_options", "invalid_value");
    o.include_usage = FieldReader(so->get_object(), "stream_options").boolean("include_usage").value_or(false);
  }

  if (auto n = body.integer("n"); n && *n != 1)
    throw invalid_value("n", "kvgate returns one choice per request, so n must be 1, but got " +
                                 std::to_string(*n) + " instead.");

  require_zero_penalty(body, "frequency_penalty");
  require_zero_penalty(body, "presence_penalty");

  o.user = body.string("user").value_or("");
  // vLLM's extension: generate max_tokens whatever the model's EOS says
  // (benchmarks and tests that need a fixed length).
  o.ignore_eos = body.boolean("ignore_eos").value_or(false);
  if (auto salt = body.string("cache_salt")) {
    if (salt->empty()) throw invalid_value("cache_salt", "expected a non-empty string; leave it out for none.");
    o.cache_salt = std::move(*salt);
  }
  if (auto key = body.string("prompt_cache_key")) {
    if (key->size() > kMaxPromptCacheKeyBytes)
      throw invalid_value("prompt_cache_key", "at most " + std::to_string(kMaxPromptCacheKeyBytes) + " bytes.");
    o.prompt_cache_key = std::move(*key);
  }
  using std::chrono::seconds;
  if (auto retention = body.string("prompt_cache_retention")) {
    if (*retention == "in_memory") o.pin_ttl = seconds(300);
    else if (*retention == "24h") o.pin_ttl = seconds(3600);
    else throw invalid_value("prompt_cache_retention", "expected \"in_memory\" or \"24h\".");
  }
  if (auto ttl = body.string("cache_ttl")) {
    if (*ttl == "5m") o.pin_ttl = seconds(300);
    else if (*ttl == "1h") o.pin_ttl = seconds(3600);
    else throw invalid_value("cache_ttl", "expected \"5m\" or \"1h\".");
  }
  return o;
}

SamplingParams sampling_params(const GenerationOptions& o, uint64_t seed_if_absent) {
  SamplingParams p;
  p.temperature = o.temperature;
  p.top_p = o.top_p;
  p.top_k = o.top_k;
  p.seed = o.seed ? static_cast<uint64_t>(*o.seed) : seed_if_absent;
  return p;
}

}  // namespace kvgate::openai
