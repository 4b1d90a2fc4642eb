#include "engine/generator.h"

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/request_timing.h"
#include "engine/scheduler.h"
#include "engine/stream_decoder.h"
#include "engine/tokenizer.h"

namespace kvgate {

GenerateResult generate(std::unique_ptr<Backend> backend, const Tokenizer& tokenizer, const GenerateRequest& req,
                        const std::function<void(std::string_view)>& on_text) {
  SchedulerOptions opt;
  opt.prefix_cache = false;  // one request: nothing to share (and no fingerprint to compute)
  opt.eos = tokenizer.eos();
  Scheduler scheduler(std::move(backend), std::move(opt));

  Request r;
  r.prompt = req.prompt;
  r.sampling = req.sampling;
  r.max_tokens = req.max_tokens;
  r.ignore_eos = req.ignore_eos;
  auto stream = scheduler.submit(std::move(r), {});

  // A prompt with text makes the output a continuation: its first piece's
  // leading space is a real space (" world" after "Hello").
  StreamDecoder decoder(tokenizer, tokenizer.decode(req.prompt).empty());
  StopStrings stops(req.stop);
  GenerateResult out;
  auto emit = [&](const std::string& s) {
    if (s.empty()) return;
    out.text += s;
    if (on_text) on_text(s);
  };
  while (!scheduler.idle()) {
    scheduler.step();
    while (auto t = stream->try_pop()) {
      out.output.push_back(*t);
      StopStrings::Step s = stops.push(decoder.push(*t));
      emit(s.emit);
      if (s.stopped) {
        scheduler.cancel(stream->id());
        break;
      }
    }
  }
  const Completion& done = stream->wait();
  if (stops.stopped()) {
    out.finish = FinishReason::kStop;
  } else {
    StopStrings::Step s = stops.push(decoder.finish());
    emit(s.emit);
    if (!s.stopped) emit(stops.flush());
    out.finish = s.stopped || done.outcome == Outcome::kStop ? FinishReason::kStop : FinishReason::kLength;
    if (done.outcome == Outcome::kError) throw Error("generation failed: " + done.error);
  }
  out.ttft_ms = ttft_ms(done.timing);
  out.tpot_ms = tpot_ms(done.timing);
  out.total_ms = e2e_ms(done.timing);
  return out;
}

}  // namespace kvgate
