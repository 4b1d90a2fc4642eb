// One request, start to finish, through the engine's own Scheduler: the
// same admission, chunked prefill and decode path as served traffic, driven
// step by step on the calling thread. Text is assembled here, where the
// stop strings live: the scheduler deals in token ids.
//
// For `kvgate generate` and quick experiments; a server runs the Engine
// loop with many requests instead.
#pragma once

#include <functional>
#include <memory>
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
  double ttft_ms = 0;               // arrival to first token
  double tpot_ms = 0;               // (t_last - t_first) / (n - 1); NaN for one token
  double total_ms = 0;
};

// Streams text to on_text as it becomes final. Throws kvgate::Error when the
// prompt is empty, does not fit the context, or the KV pool is too small.
GenerateResult generate(std::unique_ptr<Backend> backend, const Tokenizer& tokenizer, const GenerateRequest& req,
                        const std::function<void(std::string_view)>& on_text = {});

}  // namespace kvgate
