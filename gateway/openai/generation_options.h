// The fields chat completions and completions share: how many tokens, how
// they are drawn, when to stop, how the answer is delivered, and kvgate's
// cache_salt. Parsed and validated once, so every value here is in range.
//
// Defaults are OpenAI's: temperature 1, top_p 1, no stop, not streamed.
// max_tokens stays optional: "as many as the context has room for" is the
// caller's to compute (it knows the prompt's length and the context), and so
// does seed: without one, the caller draws a random seed.
//
// Pure values; any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling/sampling_params.h"
#include "gateway/openai/json_fields.h"

namespace kvgate::openai {

inline constexpr int kMaxStopSequences = 4;  // as OpenAI
// Bytes of one stop sequence: far past any real one, and a bound on what a
// request can ask the stream's matcher to hold back.
inline constexpr std::size_t kMaxStopBytes = 1024;
inline constexpr std::size_t kMaxPromptCacheKeyBytes = 1024;

struct GenerationOptions {
  std::optional<int32_t> max_tokens;  // >= 1 when given
  float temperature = 1.0f;           // [0, 2]; 0 is greedy
  float top_p = 1.0f;                 // (0, 1]
  int32_t top_k = 0;                  // 0 = off (vLLM's -1 is read as 0)
  std::optional<int64_t> seed;
  std::vector<std::string> stop;      // at most 4, none empty
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage; only when streaming
  std::string user;
  std::string cache_salt;             // empty = none; narrows the tenant's cache scope, never widens it
  // OpenAI's prompt_cache_key (empty = none): on kvgate route, requests of
  // the tenant with the same key go to one replica while it has room; one
  // server has one cache, so there it changes nothing.
  std::string prompt_cache_key;
  bool ignore_eos = false;            // vLLM's extension: run to max_tokens past EOS
  // Pin the prompt's cached prefix for this long after the request (0: no
  // pin): OpenAI's prompt_cache_retention ("in_memory": 5 minutes, "24h":
  // kvgate's longest pin, 1 hour) or kvgate's cache_ttl ("5m" or "1h"),
  // which wins when both are given.
  std::chrono::seconds pin_ttl{0};

  bool operator==(const GenerationOptions&) const = default;
};

enum class Endpoint { kChatCompletions, kCompletions };

// Reads the shared fields of a request body. For chat, max_completion_tokens
// is read too and wins over max_tokens when both are given. Throws ApiError
// (400, naming the field) for a wrong type or value, n != 1, and a non-zero
// frequency_penalty or presence_penalty, which kvgate does not apply.
GenerationOptions parse_generation_options(const FieldReader& body, Endpoint endpoint);

// The engine's sampling parameters; `seed_if_absent` is used when the
// request named no seed (the caller draws it, so this stays pure).
SamplingParams sampling_params(const GenerationOptions& o, uint64_t seed_if_absent);

}  // namespace kvgate::openai
