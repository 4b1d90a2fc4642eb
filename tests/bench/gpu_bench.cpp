// kvgate_gpu_bench: the CUDA backend on one GPU, read against the device's
// own limits measured in the same run (issue 15; ops/bench gpu; run by
// ops/gpu-check on the GPU machines).
//
// The model is Llama-3-8B-shaped in BF16 (32 layers, dim 4096, 32 heads, 8
// KV heads, FFN 14336) with the largest vocabulary shared/testdata has,
// deepseek-llm's (Llama-3's 128,256 is not there), written by mkmodel's
// writer into MODEL_DIR on first use and reused after: 16 GB do not travel
// to a GPU machine, so it is made there.
//
//   decode    batch 1, 8, 32, 64 at 512 tokens of context, Backend::forward
//             driven directly, CUDA graphs on and off, against the roofline:
//             the bytes a step reads (weights + K/V) at the measured
//             device-to-device copy bandwidth
//   host      per decode step, the wall time of forward() less its device
//             time (cuda_last_step_timing)
//   prefill   512, 2,048 and 8,192-token prompts from an empty cache: matmul
//             TFLOP/s against cuBLAS alone on the same GEMMs
//   TTFT      an 8,192-token prompt through the Scheduler and the prefix
//             cache, cold vs 7,680 tokens cached
//   Q8_0      the same shape and seed in Q8_0 (a second file, 8.3 GB,
//             written and reused the same way): decode at batch 1, 8 and 16
//             with CUDA graphs, against its own roofline, and its batch-1
//             tokens/s over BF16's (the bytes alone say 1.87x)
//
// Without a CUDA device it writes no model and prints every table with the
// GPU columns empty ("–") and the columns the shape alone gives filled in.
// A part that fails is named below the tables and on stderr, the others
// still run, and the exit status is 1.
//
// Usage: kvgate_gpu_bench [SHARED_DIR [MODEL_DIR]] (bench_models.h). The
// device's limits are measured in gpu_limits.cpp, the tables printed by
// gpu_report.cpp.
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/model/synthetic_model.h"
#include "engine/sched/scheduler.h"
#include "kernels/cuda_backend.h"
#include "tests/bench/bench_models.h"
#include "tests/bench/bench_prompts.h"
#include "tests/bench/median.h"
#include "tests/bench/gpu_bench.h"
#include "tests/bench/gpu_limits.h"

namespace kvgate {
namespace {

using namespace gpu_bench;
using Clock = std::chrono::steady_clock;

// Rows per forward pass when the decode batches' prompts are prefilled, as a
// scheduler's step budget would split them: the backend's scratch then
// never grows past what the 8,192-token prefill needs anyway.
constexpr int32_t kMaxStepTokens = 8192;
constexpr cache::ScopeId kScope{0x6770755f62656e63, 15};

const Clock::time_point g_start = Clock::now();

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// On stderr, so that stdout is the markdown alone.
void progress(const std::string& what) {
  std::fprintf(stderr, "[gpu bench %6.1f s] %s\n", seconds_since(g_start), what.c_str());
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(what);
}

std::vector<BlockId> block_range(int32_t first, int32_t count) {
  std::vector<BlockId> t(static_cast<size_t>(count));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

int32_t blocks_for(int32_t tokens) { return (tokens + kBlock - 1) / kBlock; }

// ---- The model ----

SyntheticModelSpec llama3_8b_spec(const std::string& shared) {
  SyntheticModelSpec s;
  s.layers = 32, s.dim = 4096, s.heads = 32, s.kv_heads = 8, s.ffn = 14336;
  s.context = 16384;  // the 8,192-token prompts, with room
  s.rope_base = 500000;  // Llama-3's
  s.type = TensorType::BF16;
  s.seed = 15;
  s.vocab_from = shared + "/testdata/ggml-vocab-deepseek-llm.gguf";
  return s;
}

int32_t vocab_size_of(const std::string& gguf) {
  const auto f = GgufFile::open(gguf);
  const GgufValue* t = f->find("tokenizer.ggml.tokens");
  require(t && t->type == GgufType::ARRAY, gguf + " has no tokenizer.ggml.tokens");
  return static_cast<int32_t>(std::get<GgufArray>(t->v).size());
}

// The config the model will have: without a device it is never written.
ModelConfig planned_config(const SyntheticModelSpec& s, int32_t vocab) {
  ModelConfig c;
  c.arch = "llama";
  c.n_layers = s.layers, c.dim = s.dim, c.n_heads = s.heads, c.n_kv_heads = s.kv_heads;
  c.head_dim = c.rope_dim = s.dim / s.heads;
  c.ffn_dim = s.ffn, c.vocab_size = vocab, c.context_length = s.context;
  c.rope_base = s.rope_base, c.rms_eps = s.rms_eps;
  return c;
}

// Blocks for the biggest decode batch (each sequence in blocks of its own),
// which also hold the TTFT's shared prefix and a few prompts beside it.
constexpr int32_t kKvBlocks =
    kDecodeBatches.back() * ((kDecodeContext + kDecodeWarmup + kDecodeSteps + kBlock - 1) / kBlock);
static_assert(kKvBlocks >= 3 * (kTtftPrompt / kBlock), "the pool holds the prefix and a cold prompt beside it");

// Writes the model unless it is already there (under a temporary name,
// renamed only when whole, so an interrupted write is never reused).
// Returns the seconds spent writing, 0 when reused.
double ensure_model(const SyntheticModelSpec& s, const std::string& path, double bytes) {
  if (std::filesystem::exists(path)) return 0;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(dir);
  const double free = static_cast<double>(std::filesystem::space(dir).available);
  require(free > bytes + 1e9, "not enough disk space for the model in " + dir.string() + ": " + gb(free) +
                                  " free, " + gb(bytes) + " needed (give another MODEL_DIR)");
  progress("writing the model to " + path + " (" + gb(bytes) + ", once per machine)");
  const auto t0 = Clock::now();
  write_synthetic_model(s, path + ".tmp");
  std::filesystem::rename(path + ".tmp", path);
  return seconds_since(t0);
}

// ---- The runs ----

// Runs one part of the measurement. A failure is printed with the tables
// and makes the exit status 1, but the parts after it still run (they fail
// fast too if the device faulted), so one GPU run shows all it can.
template <typename F>
void part(Figures& f, const std::string& name, F&& run) {
  try {
    run();
  } catch (const std::exception& e) {
    f.failures.push_back(name + ": " + e.what());
    progress("FAILED: " + f.failures.back());
  }
}

BackendOptions backend_options(const ModelConfig& c, bool graphs) {
  BackendOptions o;
  o.block_size = kBlock;
  o.kv_type = KvType::kBF16;
  o.kv_budget_bytes = kv_budget_for_blocks(c, KvType::kBF16, kBlock, kKvBlocks);
  o.device_graphs = graphs;
  return o;
}

// `batch` sequences of kDecodeContext random tokens, each in its own blocks,
// prefilled; then decode steps, one token per sequence and each wanting its
// logits, as the scheduler's decode steps do.
DecodeFigures time_decode(Backend& be, int32_t batch) {
  const int32_t steps = kDecodeWarmup + kDecodeSteps, len = kDecodeContext + steps, per_seq = blocks_for(len);
  const int32_t vocab = be.config().vocab_size;
  std::vector<Tokens> toks;
  std::vector<std::vector<BlockId>> tables;
  for (int32_t i = 0; i < batch; ++i) {
    toks.push_back(bench_prompt(len, vocab, 1000 + static_cast<uint32_t>(i)));
    tables.push_back(block_range(i * per_seq, per_seq));
  }
  Logits out;
  std::vector<SequenceStep> step;
  for (int32_t i = 0; i < batch;) {
    step.clear();
    for (; i < batch && static_cast<int32_t>(step.size() + 1) * kDecodeContext <= kMaxStepTokens; ++i)
      step.push_back({std::span(toks[i]).first(kDecodeContext), 0, tables[i], LogitsWanted::kLast});
    be.forward(step, out);
  }
  std::vector<double> wall, device, outside;
  DecodeFigures f{.graph_steps = 0};
  for (int32_t j = 0; j < steps; ++j) {
    const int32_t pos = kDecodeContext + j;
    step.clear();
    for (int32_t i = 0; i < batch; ++i)
      step.push_back({std::span(toks[i]).subspan(pos, 1), pos, tables[i], LogitsWanted::kLast});
    const auto t0 = Clock::now();
    be.forward(step, out);
    const double s = seconds_since(t0);
    if (j < kDecodeWarmup) continue;  // the first steps capture graphs and load kernels
    const CudaStepTiming t = cuda_last_step_timing(be);
    wall.push_back(s), device.push_back(t.device_seconds), outside.push_back(s - t.device_seconds);
    f.graph_steps += t.graph ? 1 : 0;
  }
  require(out.total_rows() == batch, "a decode step of " + std::to_string(batch) + " returned " +
                                         std::to_string(out.total_rows()) + " logits rows");
  f.step_s = median(wall), f.device_s = median(device), f.outside_s = median(outside);
  return f;
}

void decode_sweep(Backend& be, const std::string& which, std::array<DecodeFigures, kDecodeBatches.size()>& r) {
  for (size_t b = 0; b < kDecodeBatches.size(); ++b) {
    progress("decode, " + which + ", batch " + std::to_string(kDecodeBatches[b]));
    r[b] = time_decode(be, kDecodeBatches[b]);
  }
}

// One sequence from an empty cache (each run overwrites the same blocks);
// one untimed run first, since each size loads GEMM kernels of its own.
double time_prefill(Backend& be, int32_t tokens) {
  const Tokens prompt = bench_prompt(tokens, be.config().vocab_size, 2000 + static_cast<uint32_t>(tokens));
  const std::vector<BlockId> table = block_range(0, blocks_for(tokens));
  const SequenceStep s{prompt, 0, table, LogitsWanted::kLast};
  Logits out;
  be.forward({&s, 1}, out);
  std::vector<double> v;
  for (int r = 0; r < kPrefillRuns; ++r) {
    const auto t0 = Clock::now();
    be.forward({&s, 1}, out);
    v.push_back(seconds_since(t0));
  }
  return median(v);
}

// As prefix_bench's: every prompt accounted as exactly `cached` cached tokens.
void require_cached(const RequestResult& r, int32_t cached, const std::string& which) {
  require(r.prompt_tokens == kTtftPrompt && r.cached_tokens == cached && r.fresh_prefill_tokens == kTtftPrompt - cached,
          which + ": expected " + std::to_string(kTtftPrompt) + " prompt tokens, " + std::to_string(cached) +
              " cached, got " + std::to_string(r.prompt_tokens) + " prompt, " + std::to_string(r.cached_tokens) +
              " cached, " + std::to_string(r.fresh_prefill_tokens) + " prefilled");
}

// submit() to the first token out of step(): admission, lookup and prefill,
// which must be one forward pass. A request that max_tokens 1 ends is done
// in a step or two more: the loops are bounded, never a hang.
double time_to_first_token(Scheduler& sched, Tokens prompt, int32_t cached, const std::string& which) {
  const auto t0 = Clock::now();
  auto stream = sched.submit(first_token_request(std::move(prompt), kScope), {});
  std::optional<TokenId> first;
  int steps = 0;
  for (; !first && steps < 4 && !sched.idle(); ++steps) {
    sched.step();
    first = stream->try_pop();
  }
  const double s = seconds_since(t0);
  for (int more = 0; !sched.idle(); ++more) {
    require(more < 4, which + ": the scheduler did not finish a one-token request");
    sched.step();
  }
  const Completion& done = stream->wait();
  require(done.error.empty(), which + " failed: " + done.error);
  require(first && steps == 1,
          which + ": the first token took " + std::to_string(steps) + " steps, not one forward pass");
  require_cached(done.result, cached, which);
  return s;
}

// The weights' identity is the spec: hashing 16 GB for a key no other run
// shares would only cost time on the device.
void time_ttft(std::unique_ptr<Backend> be, const SyntheticModelSpec& spec, Figures& f) {
  const int32_t vocab = be->config().vocab_size;
  SchedulerOptions so;
  so.model = model_fingerprint(cache::Hash128{spec.seed, static_cast<uint64_t>(vocab)}, be->kv_layout());
  so.max_step_tokens = kTtftPrompt;  // each prompt is one forward pass
  Scheduler sched(std::move(be), std::move(so));
  const Tokens prefix = bench_prompt(kTtftCached, vocab, 3000);
  auto suffix = [&](uint32_t salt) { return bench_prompt(kTtftPrompt - kTtftCached, vocab, salt); };
  time_to_first_token(sched, concat(prefix, suffix(3001)), 0, "seeding request");
  std::vector<double> warm, cold;
  // Round 0 is untimed: the 512-row suffix loads kernels of its own.
  for (int i = 0; i <= kTtftRuns; ++i) {
    const std::string n = std::to_string(i);
    const double w = time_to_first_token(sched, concat(prefix, suffix(3100 + i)), kTtftCached, "warm run " + n);
    const double c = time_to_first_token(sched, bench_prompt(kTtftPrompt, vocab, 3200 + i), 0, "cold run " + n);
    if (i > 0) warm.push_back(w), cold.push_back(c);
  }
  f.warm_s = median(warm), f.cold_s = median(cold);
}

void measure_limits(const ModelConfig& c, Figures& f) {
  f.device = "CUDA device 0, not described (see \"Failed\" below)";
  const GpuDevice d = describe_gpu();
  char line[512];
  std::snprintf(line, sizeof line, "%s (sm_%d%d, %d SMs, %.1f GiB), CUDA runtime %d.%d, driver %d.%d", d.name.c_str(),
                d.major, d.minor, d.sms, static_cast<double>(d.memory_bytes) / (1 << 30), d.runtime_version / 1000,
                d.runtime_version % 1000 / 10, d.driver_version / 1000, d.driver_version % 1000 / 10);
  f.device = line;
  progress("device: " + f.device + "; measuring its limits");
  f.copy_gbps = measure_d2d_copy_gbps(kCopyBytes, kCopyReps);
  const GemmShape square{kGemmPeak, kGemmPeak, 0};
  f.gemm_peak_tflops = measure_bf16_gemm_tflops(kGemmPeak, {&square, 1}, kGemmPeakRepeat, kGemmPasses);
  const std::vector<GemmShape> layer = layer_gemms(c);
  for (size_t i = 0; i < kPrefillTokens.size(); ++i)
    f.cublas_tflops[i] = measure_bf16_gemm_tflops(kPrefillTokens[i], layer, c.n_layers, kGemmPasses);
}

// The spec's model in `format`, written unless there; `note` says which.
std::shared_ptr<const Model> load_model(const std::string& models_dir, const SyntheticModelSpec& spec,
                                        const ModelConfig& c, WeightFormat format, std::string& note) {
  std::string type = format.name;
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const std::string path = models_dir + "/llama3-8b-shape-" + type + "-vocab" + std::to_string(c.vocab_size) +
                           "-ctx" + std::to_string(spec.context) + "-seed" + std::to_string(spec.seed) + ".gguf";
  const double write_s = ensure_model(spec, path, model_bytes(c, format));
  note = write_s > 0 ? "Written to " + path + " in " + std::to_string(static_cast<int>(write_s)) + " s."
                     : "Reused from " + path + ".";
  progress(note + " Loading it");
  auto model = Model::load(path);
  const ModelConfig& m = model->config();
  require(m.n_layers == c.n_layers && m.dim == c.dim && m.n_heads == c.n_heads && m.n_kv_heads == c.n_kv_heads &&
              m.ffn_dim == c.ffn_dim && m.vocab_size == c.vocab_size && m.context_length == c.context_length,
          path + " does not have the benchmark's shape: delete it and run again");
  return model;
}

// The Q8_0 copy's decode, with CUDA graphs: its own file (the same spec but
// the type, so the same weights up to Q8_0's rounding), one backend.
void measure_q8_0(const BenchDirs& dirs, SyntheticModelSpec spec, const ModelConfig& c, Figures& f) {
  spec.type = TensorType::Q8_0;
  std::shared_ptr<const Model> model;
  part(f, "Q8_0 model", [&] { model = load_model(dirs.models, spec, c, kQ8_0, f.q8_0_model_note); });
  if (!model) return;
  part(f, "Q8_0 backend", [&] {
    progress("uploading the Q8_0 weights (CUDA graphs on)");
    auto be = make_backend("cuda", model, backend_options(c, true));
    for (size_t b = 0; b < kQ8_0DecodeBatches.size(); ++b)
      part(f, "Q8_0 decode, batch " + std::to_string(kQ8_0DecodeBatches[b]), [&] {
        progress("Q8_0 decode, batch " + std::to_string(kQ8_0DecodeBatches[b]));
        f.q8_0[b] = time_decode(*be, kQ8_0DecodeBatches[b]);
      });
  });
}

// The limits first, while the device's memory is all free; then one backend
// with CUDA graphs (decode, prefill) and one without (decode, TTFT), each
// uploading the weights itself, one at a time; then the Q8_0 copy.
void measure(const BenchDirs& dirs, const SyntheticModelSpec& spec, const ModelConfig& c, Figures& f) {
  part(f, "device limits", [&] { measure_limits(c, f); });
  std::shared_ptr<const Model> model;
  part(f, "model", [&] { model = load_model(dirs.models, spec, c, kBF16, f.model_note); });
  if (!model) return;
  part(f, "backend with CUDA graphs", [&] {
    progress("uploading the weights (CUDA graphs on)");
    auto be = make_backend("cuda", model, backend_options(c, true));
    part(f, "decode, graphs on", [&] { decode_sweep(*be, "graphs on", f.graphs); });
    for (size_t i = 0; i < kPrefillTokens.size(); ++i)
      part(f, "prefill of " + std::to_string(kPrefillTokens[i]), [&] {
        progress("prefill of " + std::to_string(kPrefillTokens[i]) + " tokens");
        f.prefill_s[i] = time_prefill(*be, kPrefillTokens[i]);
      });
  });
  part(f, "backend without CUDA graphs", [&] {
    progress("uploading the weights (CUDA graphs off)");
    auto be = make_backend("cuda", model, backend_options(c, false));
    part(f, "decode, graphs off", [&] { decode_sweep(*be, "graphs off", f.no_graphs); });
    progress("TTFT through the Scheduler, cold vs warm");
    part(f, "TTFT", [&] { time_ttft(std::move(be), spec, f); });
  });
  model.reset();
  measure_q8_0(dirs, spec, c, f);
  progress("done");
}

int run(const BenchDirs& dirs) {
  const SyntheticModelSpec spec = llama3_8b_spec(dirs.shared);
  validate(spec);
  require(std::filesystem::exists(spec.vocab_from), spec.vocab_from + " not found (is SHARED_DIR right?)");
  const ModelConfig c = planned_config(spec, vocab_size_of(spec.vocab_from));
  progress("vocabulary: " + std::to_string(c.vocab_size) + " tokens from " + spec.vocab_from);
  Figures f;
  if (cuda_device_count() > 0)
    measure(dirs, spec, c, f);
  else
    progress("no CUDA device: printing the tables with the GPU columns empty");
  print_report(c, spec.vocab_from, f);
  for (const std::string& why : f.failures) std::fprintf(stderr, "gpu bench: %s\n", why.c_str());
  return f.failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace kvgate

int main(int argc, char** argv) {
  try {
    return kvgate::run(kvgate::bench_dirs(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu bench: %s\n", e.what());
    return 1;
  }
}
