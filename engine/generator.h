// One request, start to finish, on a backend of its own: prefill the prompt,
// then decode token by token until EOS, a stop string or the token limit.
//
// This is the engine's simplest driver, for `kvgate generate` and for the
// benchmarks; the scheduler runs many requests over a shared KV pool.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sampler.h"
#include "engine/stop_condition.h"
#include "engine/token.h"

namespace kvgate {

class Backend;
class Tokenizer;

struct GenerateRequest {
  Tokens prompt;                    // already tokenized (BOS included if wanted)
  SamplingParams sampling;
  int32_t max_tokens = 0;           // 0 = as many as the context has room for
  std::vector<std::string> stop;    // stop strings
  bool ignore_eos = false;          // benchmarks generate a fixed count
};

struct GenerateResult {
  Tokens output;                    // generated ids (a stop token is not included)
  std::string text;                 // what a client sees: stop string and after cut
  FinishReason finish = FinishReason::kNone;
  double ttft_ms = 0;               // start to first token
  double tpot_ms = 0;               // (t_last - t_first) / (n - 1); NaN for one token
  double total_ms = 0;
};

// Streams text to on_text as it becomes final. Throws kvgate::Error when the
// prompt is empty, does not fit the context, or the KV pool is too small.
GenerateResult generate(Backend& backend, const Tokenizer& tokenizer, const GenerateRequest& req,
                        const std::function<void(std::string_view)>& on_text = {});

}  // namespace kvgate
