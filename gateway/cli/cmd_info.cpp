// kvgate info: a model's shape and what a KV budget holds, as vLLM reports at
// start-up ("# GPU blocks", maximum concurrency at full context).
#include <cstdio>
#include <memory>

#include <boost/json.hpp>

#include "engine/backend.h"
#include "engine/kv_layout.h"
#include "engine/model/model.h"
#include "engine/model/weight_summary.h"
#include "gateway/cli/commands.h"
#include "gateway/config/byte_size.h"

namespace kvgate::cli {
namespace {

struct InfoOptions {
  std::string model;
  std::string kv_budget = "4GiB";
  int32_t block_size = BackendOptions{}.block_size;
  std::string kv_type = "f32";
  bool json = false;
};

// {"Q4_K": {"tensors": 13, "bytes": N}, ...}
boost::json::object weight_types_json(const WeightSummary& w) {
  boost::json::object o;
  for (const WeightTypeBytes& t : w.types)
    o[ggml_type_name(static_cast<uint32_t>(t.type))] = {{"tensors", t.tensors}, {"bytes", t.bytes}};
  return o;
}

void run(const InfoOptions& o) {
  auto model = Model::load(o.model);
  const ModelConfig& c = model->config();
  const int64_t budget = config::parse_byte_size(o.kv_budget);
  const KvType kv = kv_type_from_name(o.kv_type);
  const int64_t elem = kv_type_bytes(kv);
  const KvCapacity cap = kv_capacity(c, kv, o.block_size, budget);
  const int64_t per_token = cap.bytes_per_token;
  const int64_t blocks = cap.num_blocks;
  const int64_t tokens = cap.tokens();
  const int64_t blocks_per_seq = (c.context_length + o.block_size - 1) / o.block_size;
  const int64_t full_seqs = blocks / blocks_per_seq;
  const int64_t params = model->weights().parameter_count();
  const size_t weight_bytes = model->file().tensor_data().size();
  const WeightSummary weights = summarize_weights(model->file());

  if (o.json) {
    boost::json::object j{{"model", o.model},
                          {"architecture", c.arch},
                          {"gguf_version", model->file().version()},
                          {"layers", c.n_layers},
                          {"dim", c.dim},
                          {"heads", c.n_heads},
                          {"kv_heads", c.n_kv_heads},
                          {"head_dim", c.head_dim},
                          {"ffn_dim", c.ffn_dim},
                          {"vocab", c.vocab_size},
                          {"context_length", c.context_length},
                          {"parameters", params},
                          {"weight_bytes", weight_bytes},
                          {"weight_type", weights.file_type},
                          {"weight_types", weight_types_json(weights)},
                          {"kv_type", kv_type_name(kv)},
                          {"kv_bytes_per_element", elem},
                          {"kv_bytes_per_token", per_token},
                          {"kv_budget_bytes", budget},
                          {"block_size", o.block_size},
                          {"kv_blocks", blocks},
                          {"kv_tokens", tokens},
                          {"full_context_sequences", full_seqs}};
    std::printf("%s\n", boost::json::serialize(j).c_str());
    return;
  }
  std::printf("model            %s (%s, GGUF v%u, %s)\n", o.model.c_str(), c.arch.c_str(), model->file().version(),
              c.name.c_str());
  std::printf("shape            %d layers, dim %d, %d heads, %d KV heads (head dim %d), FFN %d, vocab %d\n",
              c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.head_dim, c.ffn_dim, c.vocab_size);
  std::printf("context          %d tokens, RoPE base %g over %d dims\n", c.context_length, c.rope_base, c.rope_dim);
  std::printf("parameters       %lld (%.1f MiB of tensor data)\n", static_cast<long long>(params),
              static_cast<double>(weight_bytes) / 1048576.0);
  std::printf("weights          %s\n", weights.text().c_str());
  std::printf("KV per token     2 x %d layers x %d KV heads x %d head dim x %lld B (%s) = %lld B\n", c.n_layers,
              c.n_kv_heads, c.head_dim, static_cast<long long>(elem), std::string(kv_type_name(kv)).c_str(),
              static_cast<long long>(per_token));
  std::printf("KV budget        %lld B: %lld blocks of %d tokens = %lld cached tokens\n",
              static_cast<long long>(budget), static_cast<long long>(blocks), o.block_size,
              static_cast<long long>(tokens));
  std::printf("max concurrency  %lld sequences of the full %d-token context\n", static_cast<long long>(full_seqs),
              c.context_length);
}

}  // namespace

void add_info(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Print a model's shape, KV bytes per token and KV capacity");
  cmd->add_option("--model", o->model, "GGUF model file")->required();
  cmd->add_option("--kv-budget", o->kv_budget, "KV cache memory, e.g. 4GiB or 1073741824")->capture_default_str();
  cmd->add_option("--block-size", o->block_size, "tokens per KV block")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--kv-type", o->kv_type, "K/V element type: f32, f16 or bf16 (2 bytes each)")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] { run(*o); });
}

}  // namespace kvgate::cli
