// kvgate mkmodel: write a GGUF of the Llama kind (llama, qwen2, qwen3, gemma2, gemma3, phi3) with
// seeded random weights, so tests and benchmarks can run every family and
// realistic sizes that cannot be downloaded here.
#include <cstdio>
#include <memory>

#include "base/file_text.h"
#include "engine/model/quant_mix.h"
#include "engine/model/synthetic_model.h"
#include "gateway/cli/commands.h"

namespace kvgate::cli {
namespace {

struct MkmodelOptions {
  SyntheticModelSpec spec;
  std::string type = "f32";
  std::string out;
  std::string chat_template_file;
};

}  // namespace

void add_mkmodel(CLI::App& app) {
  auto o = std::make_shared<MkmodelOptions>();
  CLI::App* cmd = app.add_subcommand("mkmodel", "Write a GGUF (llama, qwen2, qwen3, gemma2, gemma3, phi3) with seeded random weights");
  cmd->add_option("--out", o->out, "output GGUF file")->required();
  cmd->add_option("--arch", o->spec.arch, "architecture: llama, qwen2, qwen3, gemma2, gemma3, phi3")
      ->check(CLI::IsMember({"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"}))
      ->capture_default_str();
  cmd->add_option("--vocab-from", o->spec.vocab_from, "GGUF whose tokenizer.ggml.* metadata to copy")->required();
  cmd->add_option("--layers", o->spec.layers, "transformer blocks")->required();
  cmd->add_option("--dim", o->spec.dim, "embedding width")->required();
  cmd->add_option("--heads", o->spec.heads, "attention heads")->required();
  cmd->add_option("--kv-heads", o->spec.kv_heads, "KV heads (defaults to --heads)");
  cmd->add_option("--ffn", o->spec.ffn, "feed-forward width")->required();
  cmd->add_option("--head-dim", o->spec.head_dim, "head size, when not dim / heads (written as attention.key_length)");
  cmd->add_flag("--llama3-rope-freqs", o->spec.llama3_rope_freqs,
                "add rope_freqs.weight with Llama 3.1's RoPE factors (arch llama)");
  cmd->add_option("--sliding-window", o->spec.sliding_window, "gemma, phi3: the sliding layers' window, in positions");
  cmd->add_option("--longrope", o->spec.longrope_original_context,
                  "phi3: LongRoPE factors for contexts past this original context");
  cmd->add_option("--rope-linear-factor", o->spec.rope_linear_factor, "linear RoPE scaling by this factor (>= 1)");
  cmd->add_option("--rope-yarn-factor", o->spec.rope_yarn_factor,
                  "YaRN RoPE scaling by this factor (>= 1; needs --rope-original-context)");
  cmd->add_option("--rope-original-context", o->spec.rope_original_context, "YaRN's original context length");
  cmd->add_option("--context", o->spec.context, "context length")->capture_default_str();
  cmd->add_option("--rope-base", o->spec.rope_base, "RoPE frequency base")->capture_default_str();
  cmd->add_option("--seed", o->spec.seed, "weight seed")->capture_default_str();
  cmd->add_option("--type", o->type,
                  "the matrices' type: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, or the "
                  "mixtures q4_k_m and q5_k_m (llama-quantize's choice of type per tensor)")
      ->check([](const std::string& v) { return parse_file_type(v) ? std::string() : "unknown type " + v; })
      ->capture_default_str();
  cmd->add_option("--chat-template", o->chat_template_file, "a Jinja file to write as tokenizer.chat_template");
  cmd->add_option("--control-token", o->spec.control_tokens,
                  "add a control token with this text to the vocabulary (repeatable), as a converter adds a "
                  "family's markup tokens");
  cmd->add_option("--user-token", o->spec.user_tokens,
                  "add a user-defined token with this text to the vocabulary (repeatable), as some converters ship "
                  "a family's turn markers");
  cmd->add_option("--bos-token", o->spec.bos_token, "make the token with this text the BOS");
  cmd->add_option("--eos-token", o->spec.eos_token, "make the token with this text the EOS");
  cmd->callback([o] {
    if (!o->chat_template_file.empty()) o->spec.chat_template = read_file_text(o->chat_template_file);
    if (o->spec.kv_heads == 0) o->spec.kv_heads = o->spec.heads;
    const FileType ft = *parse_file_type(o->type);
    o->spec.type = ft.base;
    o->spec.k_quant_medium = ft.medium;
    write_synthetic_model(o->spec, o->out);
    std::printf("wrote %s\n", o->out.c_str());
  });
}

}  // namespace kvgate::cli
