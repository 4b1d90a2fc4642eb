#include "engine/generator.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/stream_decoder.h"
#include "engine/tokenizer.h"

namespace kvgate {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

GenerateResult generate(Backend& backend, const Tokenizer& tokenizer, const GenerateRequest& req,
                        const std::function<void(std::string_view)>& on_text) {
  const ModelConfig& c = backend.config();
  const auto n_prompt = static_cast<int32_t>(req.prompt.size());
  if (n_prompt == 0) throw Error("the prompt is empty");
  if (n_prompt >= c.context_length)
    throw Error("the prompt has " + std::to_string(n_prompt) + " tokens; the model's context is " +
                std::to_string(c.context_length) + " tokens and must leave room for at least one more");
  const int32_t room = c.context_length - n_prompt;
  const int32_t max_tokens = req.max_tokens > 0 ? std::min(req.max_tokens, room) : room;
  // The last generated token is never fed back, so its K/V needs no slot.
  const int32_t positions = n_prompt + max_tokens - 1;
  const int32_t B = backend.block_size();
  const int32_t n_blocks = (positions + B - 1) / B;
  if (n_blocks > backend.num_blocks())
    throw Error("the request needs " + std::to_string(n_blocks) + " KV blocks; the pool has " +
                std::to_string(backend.num_blocks()));
  std::vector<BlockId> table(static_cast<size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);

  Sampler sampler(req.sampling);
  std::vector<TokenId> stop_ids;
  if (!req.ignore_eos) stop_ids.push_back(tokenizer.eos());
  TokenLimit limit(max_tokens, stop_ids);
  StopStrings stops(req.stop);
  // A prompt with text makes the output a continuation: its first piece's
  // leading space is a real space (" world" after "Hello").
  StreamDecoder decoder(tokenizer, tokenizer.decode(req.prompt).empty());
  GenerateResult r;
  auto emit = [&](const std::string& s) {
    if (s.empty()) return;
    r.text += s;
    if (on_text) on_text(s);
  };

  const auto t0 = Clock::now();
  Clock::time_point t_first, t_last;
  Logits logits;
  SequenceStep step{req.prompt, 0, table, LogitsWanted::kLast};
  TokenId next = 0;
  for (;;) {
    backend.forward({&step, 1}, logits);
    next = sampler.sample(logits.row(0));
    t_last = Clock::now();
    if (r.output.empty()) t_first = t_last;
    r.finish = limit.on_token(next);
    if (r.finish == FinishReason::kStop) break;  // a stop token: not part of the output
    r.output.push_back(next);
    StopStrings::Step s = stops.push(decoder.push(next));
    emit(s.emit);
    if (s.stopped) {
      r.finish = FinishReason::kStop;
      break;
    }
    if (r.finish == FinishReason::kLength) break;
    step = {std::span(&next, 1), step.start_pos + static_cast<int32_t>(step.tokens.size()), table,
            LogitsWanted::kLast};
  }
  if (!stops.stopped()) {
    StopStrings::Step s = stops.push(decoder.finish());
    emit(s.emit);
    if (!s.stopped) emit(stops.flush());
  }
  r.ttft_ms = ms_between(t0, t_first);
  const size_t n = r.output.size() + (r.finish == FinishReason::kStop && !stops.stopped() ? 1 : 0);
  r.tpot_ms = n > 1 ? ms_between(t_first, t_last) / static_cast<double>(n - 1)
                    : std::numeric_limits<double>::quiet_NaN();
  r.total_ms = ms_between(t0, t_last);
  return r;
}

}  // namespace kvgate
