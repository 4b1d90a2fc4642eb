// kvgate generate: one prompt through the CPU engine, text streamed to stdout
// (or one JSON object with ids and timings).
#include <cmath>
#include <cstdio>
#include <memory>

#include <boost/json.hpp>

#include "engine/backend.h"
#include "engine/generator.h"
#include "engine/model.h"
#include "engine/tokenizer.h"
#include "gateway/commands.h"

namespace kvgate::cli {
namespace {

struct GenerateOptions {
  std::string model;
  std::string prompt;
  int32_t max_tokens = 128;
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  bool json = false;
};

boost::json::value ms_or_null(double ms) {
  return std::isnan(ms) ? boost::json::value(nullptr) : boost::json::value(ms);
}

void run(const GenerateOptions& o) {
  auto model = Model::load(o.model);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  // KV for one full context, plus the spare block the scheduler keeps for
  // copy-on-write.
  const ModelConfig& c = model->config();
  BackendOptions bo;
  bo.kv_budget_bytes = c.kv_bytes_per_token(sizeof(float)) * bo.block_size *
                       ((c.context_length + bo.block_size - 1) / bo.block_size + 1);
  auto backend = make_cpu_backend(model, bo);
  GenerateRequest req;
  req.prompt = tokenizer->encode(o.prompt, {.add_bos = true, .parse_special = false});
  req.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  validate(req.sampling);
  req.max_tokens = o.max_tokens;
  req.stop = o.stop;

  std::function<void(std::string_view)> stream;
  if (!o.json) {
    std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
    stream = [](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    };
  }
  GenerateResult r = generate(std::move(backend), *tokenizer, req, stream);
  if (o.json) {
    boost::json::object j;
    j["prompt_ids"] = boost::json::value_from(req.prompt);
    j["output_ids"] = boost::json::value_from(r.output);
    j["text"] = r.text;
    j["finish_reason"] = finish_reason_name(r.finish);
    j["ttft_ms"] = r.ttft_ms;
    j["tpot_ms"] = ms_or_null(r.tpot_ms);
    std::printf("%s\n", boost::json::serialize(j).c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr, "[%zu prompt tokens, %zu generated, finish %s, ttft %.2f ms, tpot %.2f ms]\n",
                 req.prompt.size(), r.output.size(), std::string(finish_reason_name(r.finish)).c_str(), r.ttft_ms,
                 r.tpot_ms);
  }
}

}  // namespace

void add_generate(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text from a prompt with a GGUF model on the CPU");
  cmd->add_option("--model", o->model, "GGUF model file")->required();
  cmd->add_option("--prompt", o->prompt, "prompt text (BOS is added as the vocabulary asks)");
  cmd->add_option("--max-tokens", o->max_tokens, "most tokens to generate")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", o->temperature, "0 = greedy")->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "keep the k most likely tokens (0 = off)")->capture_default_str();
  cmd->add_option("--top-p", o->top_p, "nucleus sampling mass (1 = off)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "sampling seed")->capture_default_str();
  cmd->add_option("--stop", o->stop, "stop string (repeatable); it and what follows are not output");
  cmd->add_flag("--json", o->json, "print one JSON object: prompt_ids, output_ids, text, ttft_ms, tpot_ms");
  cmd->callback([o] { run(*o); });
}

}  // namespace kvgate::cli
