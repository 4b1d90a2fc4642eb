// kvgate generate: one prompt through the CPU engine, text streamed to stdout
// (or one JSON object with ids and timings).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <boost/json.hpp>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/sched/scheduler.h"
#include "engine/text/text_stream.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cli/commands.h"

namespace kvgate::cli {
namespace {

struct GenerateOptions {
  std::string model;
  std::string prompt;
  int32_t max_tokens = 0;  // 0: 128, or what the context leaves if less
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  std::string backend = "auto";
  std::string kv_type = "f32";
  bool json = false;
};

boost::json::value ms_or_null(double ms) {
  return std::isnan(ms) ? boost::json::value(nullptr) : boost::json::value(ms);
}

struct Generated {
  Tokens output;
  std::string text;
  FinishReason finish = FinishReason::kStop;
  RequestTiming timing;
};

// One request through the engine's own Scheduler, stepped on this thread:
// the same admission, chunked prefill and decode as served traffic.
Generated generate(std::unique_ptr<Backend> backend, const Tokenizer& tokenizer, Request req,
                   const GenerateOptions& o, const std::function<void(std::string_view)>& on_text) {
  SchedulerOptions opt;
  opt.prefix_cache = false;  // one request: nothing to share (and no fingerprint to compute)
  opt.eos = tokenizer.eos();
  Scheduler scheduler(std::move(backend), std::move(opt));
  const bool continuation = !tokenizer.decode(req.prompt).empty();
  auto stream = scheduler.submit(std::move(req), {});
  TextStream text(tokenizer, o.stop, continuation, [&] { scheduler.cancel(stream->id()); });
  Generated g;
  auto emit = [&](const std::string& piece) {
    g.text += piece;
    if (on_text && !piece.empty()) on_text(piece);
  };
  while (!scheduler.idle()) {
    scheduler.step();
    while (auto t = stream->try_pop()) {
      g.output.push_back(*t);
      emit(text.push(*t));
    }
  }
  const Completion& done = stream->wait();
  if (done.result.finish == FinishReason::kError) throw Error("generation failed: " + done.error);
  emit(text.finish(done.result.finish));
  g.finish = text.finish_reason();
  g.timing = done.timing;
  return g;
}

void run(const GenerateOptions& o) {
  auto model = Model::load(o.model);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  // KV for one full context, plus the spare block the scheduler keeps for
  // copy-on-write.
  const ModelConfig& c = model->config();
  BackendOptions bo;
  bo.kv_type = kv_type_from_name(o.kv_type);
  bo.kv_budget_bytes =
      kv_budget_for_blocks(c, bo.kv_type, bo.block_size, (c.context_length + bo.block_size - 1) / bo.block_size + 1);
  auto backend = make_backend(o.backend, model, bo);
  Request req;
  req.prompt = tokenizer->encode(o.prompt, {.add_bos = true, .parse_special = false});
  req.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  // An explicit --max-tokens past the context is refused, as the API does.
  req.max_tokens = o.max_tokens > 0 ? o.max_tokens : std::min(128, std::max(1, c.context_length - static_cast<int32_t>(req.prompt.size())));
  req.scope = cache::ScopeId{};  // one request, no cache: the scope only has to be there
  req.use_cache = false;
  const Tokens prompt = req.prompt;

  std::function<void(std::string_view)> stream;
  if (!o.json) {
    std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
    stream = [](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    };
  }
  Generated r = generate(std::move(backend), *tokenizer, std::move(req), o, stream);
  const double ttft = ttft_ms(r.timing), tpot = tpot_ms(r.timing);
  if (o.json) {
    boost::json::object j;
    j["prompt_ids"] = boost::json::value_from(prompt);
    j["output_ids"] = boost::json::value_from(r.output);
    j["text"] = r.text;
    j["finish_reason"] = finish_reason_name(r.finish);
    j["ttft_ms"] = ttft;
    j["tpot_ms"] = ms_or_null(tpot);
    std::printf("%s\n", boost::json::serialize(j).c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr, "[%zu prompt tokens, %zu generated, finish %s, ttft %.2f ms, tpot %.2f ms]\n",
                 prompt.size(), r.output.size(), std::string(finish_reason_name(r.finish)).c_str(), ttft, tpot);
  }
}

}  // namespace

void add_generate(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text from a prompt with a GGUF model");
  cmd->add_option("--model", o->model, "GGUF model file")->required();
  cmd->add_option("--prompt", o->prompt, "prompt text (BOS is added as the vocabulary asks)");
  cmd->add_option("--max-tokens", o->max_tokens, "most tokens to generate (default 128, or what the context leaves)")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", o->temperature, "0 = greedy")->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "keep the k most likely tokens (0 = off)")->capture_default_str();
  cmd->add_option("--top-p", o->top_p, "nucleus sampling mass (1 = off)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "sampling seed")->capture_default_str();
  cmd->add_option("--stop", o->stop, "stop string (repeatable); it and what follows are not output");
  cmd->add_option("--backend", o->backend, "auto, cpu or cuda (auto: CUDA when built and a device exists)")
      ->capture_default_str();
  cmd->add_option("--kv-type", o->kv_type, "K/V element type: f32, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object: prompt_ids, output_ids, text, ttft_ms, tpot_ms");
  cmd->callback([o] { run(*o); });
}

}  // namespace kvgate::cli
