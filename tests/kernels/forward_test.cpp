// The CUDA backend's whole forward pass against the CPU backend's: logits
// within kForwardF32Rel for f32 (and the block types, Q8_0 and Q4_0 to
// Q6_K: their weights widened exactly, the arithmetic f32), within the f16
// / bf16 tolerances for those weights and K/V types, greedy tokens
// identical over 64 steps, and a batch of sequences of different lengths
// equal to each run alone; block-quantized matrices kept in their blocks
// on the device (Q8_0's 34 bytes per 32 weights, a Q4_K_M file's mixture
// each part in its own type).
#include <filesystem>
#include <functional>
#include <numeric>
#include <set>

#include "engine/backend_registry.h"
#include "engine/cpu/cpu_backend.h"
#include "base/error.h"
#include "engine/weights_view.h"
#include "kernels/cuda_backend.h"
#include "kernels/device_weights.h"
#include "tests/engine/test_models.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

std::vector<BlockId> identity_table(int32_t n) {
  std::vector<BlockId> t(n);
  std::iota(t.begin(), t.end(), 0);
  return t;
}

TokenId argmax(std::span<const float> v) {
  return static_cast<TokenId>(std::max_element(v.begin(), v.end()) - v.begin());
}

// A synthetic Llama of the given matrix type and shape, written to a temp
// file that is unlinked once mapped.
// `medium`: with Q4_K or Q5_K, llama.cpp's _M mixture (some attn_v and
// ffn_down, and the output, in Q6_K).
std::shared_ptr<const Model> synthetic(TensorType type, int32_t dim = 64, int32_t heads = 4, int32_t kv_heads = 2,
                                       bool medium = false) {
  SyntheticModelSpec s;
  s.layers = 2, s.dim = dim, s.heads = heads, s.kv_heads = kv_heads, s.ffn = 2 * dim, s.context = 512;
  s.type = type, s.seed = 7, s.k_quant_medium = medium;
  s.vocab_from = testing::shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvgate-cuda-" + std::to_string(::getpid()) + "-" + std::to_string(static_cast<int>(type)) +
                     "-" + std::to_string(dim) + (medium ? "-m" : "") + ".gguf");
  write_synthetic_model(s, path.string());
  auto m = Model::load(path.string());
  std::filesystem::remove(path);
  return m;
}

// A synthetic model of another family (engine/model/synthetic_model.h),
// shaped as tests/models/families.txt's case for it but smaller; f32.
std::shared_ptr<const Model> synthetic_family(SyntheticModelSpec s) {
  s.type = TensorType::F32, s.seed = 11, s.context = 512;
  s.vocab_from = testing::shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvgate-cuda-" + std::to_string(::getpid()) + "-" + s.arch + "-" + std::to_string(s.dim) + ".gguf");
  write_synthetic_model(s, path.string());
  auto m = Model::load(path.string());
  std::filesystem::remove(path);
  return m;
}

SyntheticModelSpec family(const std::string& arch, int32_t layers, int32_t dim, int32_t heads, int32_t kv_heads,
                          int32_t head_dim = 0, int32_t window = 0) {
  SyntheticModelSpec s;
  s.arch = arch, s.layers = layers, s.dim = dim, s.heads = heads, s.kv_heads = kv_heads, s.head_dim = head_dim;
  s.ffn = 2 * dim, s.sliding_window = window;
  return s;
}

// The CPU backend as the reference for one sequence at a time. Its batch-1
// matmul over block-quantized weights quantizes the activation row to int8
// for int8 dot products (llama.cpp's vec_dot_q8_0_q8_0 and its kin;
// engine/cpu/matmul.cpp), which the device does not: it widens the weights
// exactly and keeps the activations f32. On synthetic(Q8_0) that alone puts
// the CPU's decode logits 1.2e-2 .. 2.3e-2 from f32 arithmetic on the same
// weights (measured on the CPU, a step alone against the same step beside a
// copy) and parts greedy decoding at the fifth token. So with block
// matrices every step runs beside a twin, the same tokens in blocks of
// their own: two rows take the CPU's f32 tiles over the widened weights,
// the device's arithmetic in another order. Other types run alone.
class CpuReference {
 public:
  explicit CpuReference(const std::shared_ptr<const Model>& model)
      : be_(make_cpu_backend(model, {})), twin_(is_block_quantized(model->weights().layers.at(0).wq.type)) {
    const int32_t half = be_->num_blocks() / 2;
    table_ = identity_table(twin_ ? half : be_->num_blocks());
    twin_table_.resize(static_cast<size_t>(half));
    std::iota(twin_table_.begin(), twin_table_.end(), half);
  }
  std::span<const BlockId> table() const { return table_; }
  // `s` (its block table within table()) into out's first sequence.
  void forward(const SequenceStep& s, Logits& out) {
    if (!twin_) return be_->forward({&s, 1}, out);
    SequenceStep pair[2] = {s, s};
    pair[1].block_table = twin_table_;
    be_->forward(pair, out);
  }

 private:
  std::unique_ptr<Backend> be_;
  bool twin_;
  std::vector<BlockId> table_, twin_table_;
};

Tokens prompt_for(const Model& m, size_t n, uint32_t salt) {
  Tokens t(n);
  uint32_t x = 2463534242u ^ (salt * 2654435761u);
  for (auto& id : t) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    id = static_cast<TokenId>(1 + x % static_cast<uint32_t>(m.config().vocab_size - 1));
  }
  return t;
}

// A 45-token prefill (crossing blocks at 16 and 32; three prefill tiles),
// then decodes to 60, on both backends, every row's logits compared.
void expect_prefill_and_decode_match(std::shared_ptr<const Model> model, const BackendOptions& opt, double rel) {
  CpuReference cpu(model);
  auto gpu = make_backend("cuda", model, opt);
  const Tokens toks = prompt_for(*model, 60, 1);
  const auto table = identity_table(gpu->num_blocks());
  const std::span<const BlockId> cpu_table = cpu.table();
  Logits lc, lg;
  SequenceStep pc{std::span(toks).first(45), 0, cpu_table, LogitsWanted::kAll};
  SequenceStep pg{std::span(toks).first(45), 0, table, LogitsWanted::kAll};
  cpu.forward(pc, lc);
  gpu->forward({&pg, 1}, lg);
  for (int32_t i = 0; i < 45; ++i) expect_rel_close(lg.row(0, i), lc.row(0, i), rel, "prefill row " + std::to_string(i));
  for (size_t i = 45; i < toks.size(); ++i) {
    SequenceStep dc{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), cpu_table, LogitsWanted::kLast};
    SequenceStep dg{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), table, LogitsWanted::kLast};
    cpu.forward(dc, lc);
    gpu->forward({&dg, 1}, lg);
    expect_rel_close(lg.row(0), lc.row(0), rel, "decode at position " + std::to_string(i));
  }
}

// Greedy decoding from a short prompt for `steps` tokens on both backends.
void expect_same_greedy(std::shared_ptr<const Model> model, int steps) {
  CpuReference cpu(model);
  auto gpu = make_backend("cuda", model, {});
  const auto gpu_table = identity_table(gpu->num_blocks());
  using Forward = std::function<void(const SequenceStep&, Logits&)>;
  auto run = [&](std::span<const BlockId> table, const Forward& forward) {
    Tokens seq = prompt_for(*model, 3, 2);
    Logits out;
    forward({seq, 0, table, LogitsWanted::kLast}, out);
    Tokens gen{argmax(out.row(0))};
    for (int s = 1; s < steps; ++s) {
      seq.push_back(gen.back());
      forward({std::span(seq).last(1), static_cast<int32_t>(seq.size() - 1), table, LogitsWanted::kLast}, out);
      gen.push_back(argmax(out.row(0)));
    }
    return gen;
  };
  EXPECT_EQ(run(gpu_table, [&](const SequenceStep& s, Logits& out) { gpu->forward({&s, 1}, out); }),
            run(cpu.table(), [&](const SequenceStep& s, Logits& out) { cpu.forward(s, out); }));
}

using CudaForward = CudaTest;

TEST_F(CudaForward, Stories260KLogitsMatchTheCpu) { expect_prefill_and_decode_match(testing::stories(), {}, kForwardF32Rel); }

TEST_F(CudaForward, Stories260KGreedy64TokensAreTheCpus) { expect_same_greedy(testing::stories(), 64); }

TEST_F(CudaForward, SyntheticF32AndQ8_0LogitsAndGreedyMatchTheCpu) {
  for (const TensorType t : {TensorType::F32, TensorType::Q8_0}) {
    SCOPED_TRACE(std::string(tensor_type_traits(static_cast<uint32_t>(t))->name));
    auto m = synthetic(t);
    expect_prefill_and_decode_match(m, {}, kForwardF32Rel);
    expect_same_greedy(m, 64);
  }
}

// Every other block type as Q8_0 above: the 32-value ones at dim 64, the
// k-quants at 256 (whole 256-value rows), and a Q4_K_M mixture, whose
// fused Q/K/V is Q4_K and Q6_K parts in some layers.
TEST_F(CudaForward, SyntheticBlockTypesLogitsAndGreedyMatchTheCpu) {
  for (const TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q4_K,
                             TensorType::Q5_K, TensorType::Q6_K}) {
    SCOPED_TRACE(std::string(tensor_type_traits(static_cast<uint32_t>(t))->name));
    auto m = synthetic(t, tensor_type_traits(static_cast<uint32_t>(t))->block_elems == 256 ? 256 : 64);
    expect_prefill_and_decode_match(m, {}, kForwardF32Rel);
    expect_same_greedy(m, 64);
  }
  SCOPED_TRACE("Q4_K_M");
  auto m = synthetic(TensorType::Q4_K, 256, 4, 2, true);
  expect_prefill_and_decode_match(m, {}, kForwardF32Rel);
  expect_same_greedy(m, 64);
}

// The seam's view of a loaded model, as the registry builds it.
MatrixView view_of(const Matrix& m) { return {static_cast<WeightType>(m.type), m.rows, m.cols, m.row_bytes, m.data}; }

WeightsView view_of(const LlamaWeights& w) {
  WeightsView v;
  v.token_embd = view_of(w.token_embd);
  v.output_norm = w.output_norm;
  v.output = view_of(w.output);
  for (const LayerWeights& l : w.layers) {
    LayerWeightsView lv{l.attn_norm, view_of(l.wq), view_of(l.wk), view_of(l.wv), view_of(l.wo), l.ffn_norm,
                        view_of(l.w_gate), view_of(l.w_up), view_of(l.w_down)};
    lv.bq = l.bq, lv.bk = l.bk, lv.bv = l.bv, lv.q_norm = l.q_norm, lv.k_norm = l.k_norm;
    lv.attn_post_norm = l.attn_post_norm, lv.ffn_post_norm = l.ffn_post_norm;
    v.layers.push_back(lv);
  }
  return v;
}

// Q8_0 matrices (and the embedding) take 34 bytes per 32 weights on the
// device, F32 ones 4 per weight: the device weights' bytes are exactly the
// matrices' weights at that rate plus the f32 norms, so a Q8_0 model takes
// about 0.27 of an F32 one's (34/32 over 4), not the same.
TEST_F(CudaForward, Q8_0MatricesStayQ8_0OnTheDevice) {
  auto device_bytes = [](TensorType t) {
    auto m = synthetic(t);
    const ModelConfig& c = m->config();
    const cuda::DeviceWeights d = cuda::DeviceWeights::upload(c, view_of(m->weights()), nullptr);
    for (const cuda::DeviceMatrix* w : d.matrices()) {
      EXPECT_EQ(w->type, static_cast<WeightType>(t));
      EXPECT_EQ(w->row_bytes, t == TensorType::Q8_0 ? static_cast<size_t>(w->cols / 32 * 34)
                                                    : static_cast<size_t>(w->cols * 4));
    }
    const double weights = static_cast<double>(c.n_layers) * c.dim * (2.0 * c.dim + 2.0 * c.kv_dim() + 3.0 * c.ffn_dim) +
                           2.0 * c.vocab_size * c.dim;  // untied embedding and head
    const double norms = 4.0 * c.dim * (2.0 * c.n_layers + 1);
    EXPECT_EQ(static_cast<double>(d.bytes), weights * (t == TensorType::Q8_0 ? 34.0 / 32 : 4.0) + norms);
    return static_cast<double>(d.bytes);
  };
  const double ratio = device_bytes(TensorType::Q8_0) / device_bytes(TensorType::F32);
  EXPECT_GT(ratio, 34.0 / 32 / 4);
  EXPECT_LT(ratio, 34.0 / 32 / 4 * 1.01);
}

// A Q4_K_M model's matrices on the device in the types the file stores
// them in, part by part, and its bytes exactly the file's matrices' plus
// the f32 norms: nothing widened to f32.
TEST_F(CudaForward, Q4_K_MMatricesKeepEachPartsTypeOnTheDevice) {
  auto m = synthetic(TensorType::Q4_K, 256, 4, 2, true);
  const ModelConfig& c = m->config();
  const LlamaWeights& h = m->weights();
  const cuda::DeviceWeights d = cuda::DeviceWeights::upload(c, view_of(h), nullptr);
  // A device matrix's types, part by part, neighbours of one type merged.
  const auto types_of = [](const cuda::DeviceMatrix& w) {
    std::vector<WeightType> t;
    if (w.parts.empty()) t.push_back(w.type);
    for (const auto& p : w.parts) t.push_back(p.type);
    return t;
  };
  const auto stored = [](std::initializer_list<const Matrix*> parts) {
    std::vector<WeightType> t;
    for (const Matrix* p : parts)
      if (t.empty() || t.back() != static_cast<WeightType>(p->type)) t.push_back(static_cast<WeightType>(p->type));
    return t;
  };
  const auto bytes = [](const Matrix& w) { return static_cast<double>(w.rows) * dense_row_bytes(static_cast<WeightType>(w.type), w.cols); };
  double want = 4.0 * c.dim * (2.0 * c.n_layers + 1) + bytes(h.output) + bytes(h.token_embd);
  bool mixed = false;
  for (size_t i = 0; i < h.layers.size(); ++i) {
    const LayerWeights& l = h.layers[i];
    const cuda::DeviceLayer& dl = d.layers[i];
    EXPECT_EQ(types_of(dl.qkv), stored({&l.wq, &l.wk, &l.wv})) << "layer " << i;
    EXPECT_EQ(types_of(dl.gate_up), stored({&l.w_gate, &l.w_up})) << "layer " << i;
    EXPECT_EQ(types_of(dl.wo), stored({&l.wo})) << "layer " << i;
    EXPECT_EQ(types_of(dl.down), stored({&l.w_down})) << "layer " << i;
    mixed = mixed || !dl.qkv.parts.empty();
    for (const Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) want += bytes(*w);
  }
  EXPECT_TRUE(mixed) << "no layer's Q/K/V mixes types: the mixture is not what this test is for";
  EXPECT_EQ(types_of(d.output), stored({&h.output}));
  EXPECT_EQ(static_cast<double>(d.bytes), want);
}

TEST_F(CudaForward, SyntheticHalfPrecisionWeightsWithinTheirPrecision) {
  expect_prefill_and_decode_match(synthetic(TensorType::F16), {}, kForwardF16Rel);
  expect_prefill_and_decode_match(synthetic(TensorType::BF16), {}, kForwardBF16Rel);
}

TEST_F(CudaForward, HeadDim256MatchesTheCpu) {
  expect_prefill_and_decode_match(synthetic(TensorType::F32, 512, 2, 1), {}, kForwardF32Rel);
}

TEST_F(CudaForward, HalfPrecisionKvWithinItsPrecision) {
  BackendOptions opt;
  opt.kv_type = KvType::kF16;
  expect_prefill_and_decode_match(testing::stories(), opt, kForwardF16Rel);
  opt.kv_type = KvType::kBF16;
  expect_prefill_and_decode_match(testing::stories(), opt, kForwardBF16Rel);
}

TEST_F(CudaForward, BatchOfDifferentLengthsEqualsEachAlone) {
  auto model = testing::stories();
  auto alone = make_backend("cuda", model, {});
  auto batched = make_backend("cuda", model, {});
  // Three sequences, prompts of 5, 23 and 40 tokens, each in its own blocks.
  const int32_t per_seq = 8;
  std::vector<Tokens> seqs{prompt_for(*model, 5, 3), prompt_for(*model, 23, 4), prompt_for(*model, 40, 5)};
  std::vector<std::vector<BlockId>> tables;
  for (int32_t s = 0; s < 3; ++s) {
    std::vector<BlockId> t(per_seq);
    std::iota(t.begin(), t.end(), s * per_seq);
    tables.push_back(t);
  }
  Logits la, lb;
  // Prefill: each alone on one backend, all three in one step on the other.
  std::vector<SequenceStep> steps;
  for (int32_t s = 0; s < 3; ++s) steps.push_back({seqs[s], 0, tables[s], LogitsWanted::kLast});
  batched->forward(steps, lb);
  for (int32_t s = 0; s < 3; ++s) {
    alone->forward({&steps[s], 1}, la);
    expect_rel_close(lb.row(s), la.row(0), kF32Rel, "prefill of sequence " + std::to_string(s));
    seqs[s].push_back(argmax(la.row(0)));
  }
  // 20 decode steps; in the middle ones sequence 1 sits out (a batch of 2).
  for (int step = 0; step < 20; ++step) {
    steps.clear();
    std::vector<int32_t> which;
    for (int32_t s = 0; s < 3; ++s) {
      if (s == 1 && step >= 5 && step < 10) continue;
      const auto pos = static_cast<int32_t>(seqs[s].size() - 1);
      steps.push_back({std::span(seqs[s]).last(1), pos, tables[s], LogitsWanted::kLast});
      which.push_back(s);
    }
    batched->forward(steps, lb);
    for (size_t i = 0; i < which.size(); ++i) {
      alone->forward({&steps[i], 1}, la);
      expect_rel_close(lb.row(i), la.row(0), kF32Rel,
                       "decode step " + std::to_string(step) + " of sequence " + std::to_string(which[i]));
      ASSERT_EQ(argmax(lb.row(i)), argmax(la.row(0)));
      seqs[which[i]].push_back(argmax(la.row(0)));
    }
  }
}

// Decode steps replayed as CUDA graphs give what launching each kernel
// gives: across every bucket's first step (eager), second (captured) and
// later ones (replayed), batches padded to their bucket, and a prefill
// between them that moves the logits buffer the graphs were captured over
// (200 rows of logits, past the 128 reserved), so they are captured again.
TEST_F(CudaForward, GraphReplayedDecodeEqualsLaunchedDecode) {
  auto model = synthetic(TensorType::BF16);
  BackendOptions opt;
  opt.kv_budget_bytes = kv_budget_for_blocks(model->config(), KvType::kF32, 16, 64);
  auto graphs = make_backend("cuda", model, opt);
  opt.device_graphs = false;
  auto eager = make_backend("cuda", model, opt);
  const int32_t per_seq = 4, n_seqs = 5;
  std::vector<Tokens> seqs;
  std::vector<std::vector<BlockId>> tables;
  for (int32_t s = 0; s < n_seqs; ++s) {
    seqs.push_back(prompt_for(*model, 3 + s, 10 + s));
    std::vector<BlockId> t(per_seq);
    std::iota(t.begin(), t.end(), s * per_seq);
    tables.push_back(t);
  }
  Logits lg, le;
  std::vector<SequenceStep> steps;
  for (int32_t s = 0; s < n_seqs; ++s) steps.push_back({seqs[s], 0, tables[s], LogitsWanted::kLast});
  graphs->forward(steps, lg);
  eager->forward(steps, le);
  EXPECT_FALSE(cuda_last_step_timing(*graphs).graph);  // a prefill is never a graph
  for (int32_t s = 0; s < n_seqs; ++s) seqs[s].push_back(argmax(le.row(s)));
  // Batches of 5 (bucket 8), 1 and 3 (bucket 4), three steps each, 5 again,
  // the 200-token prefill (-1), then 5 twice more.
  const std::vector<int32_t> sizes{5, 5, 5, 1, 1, 1, 3, 3, 3, 5, -1, 5, 5};
  std::vector<BlockId> big_table(13);
  std::iota(big_table.begin(), big_table.end(), n_seqs * per_seq);
  const Tokens big = prompt_for(*model, 200, 99);
  std::set<int32_t> seen_buckets;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      SequenceStep p{big, 0, big_table, LogitsWanted::kAll};
      graphs->forward({&p, 1}, lg);
      eager->forward({&p, 1}, le);
      continue;
    }
    steps.clear();
    for (int32_t s = 0; s < sizes[i]; ++s)
      steps.push_back({std::span(seqs[s]).last(1), static_cast<int32_t>(seqs[s].size() - 1), tables[s],
                       LogitsWanted::kLast});
    graphs->forward(steps, lg);
    eager->forward(steps, le);
    const int32_t bucket = sizes[i] == 5 ? 8 : sizes[i] == 3 ? 4 : 1;
    // A bucket's first step runs eagerly; every later one is a graph.
    EXPECT_EQ(cuda_last_step_timing(*graphs).graph, !seen_buckets.insert(bucket).second) << "step " << i;
    EXPECT_FALSE(cuda_last_step_timing(*eager).graph);
    EXPECT_GT(cuda_last_step_timing(*graphs).device_seconds, 0.0);
    ASSERT_EQ(lg.total_rows(), sizes[i]);
    for (int32_t s = 0; s < sizes[i]; ++s) {
      expect_rel_close(lg.row(s), le.row(s), kForwardBF16Rel,
                       "step " + std::to_string(i) + " sequence " + std::to_string(s));
      ASSERT_EQ(argmax(lg.row(s)), argmax(le.row(s))) << "step " << i << " sequence " << s;
      seqs[s].push_back(argmax(le.row(s)));
    }
  }
  EXPECT_THROW(cuda_last_step_timing(*make_cpu_backend(model, {})), Error);
}

TEST_F(CudaForward, ABadBatchIsAnErrorAndTheBackendGoesOn) {
  auto model = testing::stories();
  auto be = make_backend("cuda", model, {});
  const auto table = identity_table(be->num_blocks());
  const Tokens bad{1, model->config().vocab_size};
  Logits out;
  SequenceStep st{bad, 0, table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&st, 1}, out), Error);
  const std::vector<BlockId> short_table{0};
  const Tokens ok = prompt_for(*model, 20, 6);
  SequenceStep past{ok, 0, short_table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&past, 1}, out), Error);
  SequenceStep good{ok, 0, table, LogitsWanted::kLast};
  be->forward({&good, 1}, out);
  EXPECT_EQ(out.total_rows(), 1);
}

// The families beyond llama (docs/models.md), each against the CPU backend,
// which tests/engine/sched/families_test.cpp holds to llama.cpp: logits of a
// 45-token prefill and 15 decodes, then 32 greedy tokens.
//   llama, head_dim 32 of dim 96: Q (128 wide) wider than the embedding
//   qwen2: Q/K/V biases, neox RoPE, base 1,000,000
//   qwen3: Q/K norms, Q (128) wider than dim 64, neox RoPE
//   phi3: fused Q/K/V and gate/up read as row ranges, neox RoPE; again
//         with a window of 24 on every layer
//   gemma2: embedding scale, GeGLU, post-norms, query scale, attention and
//           final soft-capping, a window of 16 on layers 0 and 2 (the
//           45-token prefill and the decodes reach far past it)
//   gemma3: gemma2 without attention soft-capping, plus Q/K norms; five
//           sliding layers in six with their own RoPE base
TEST_F(CudaForward, OtherFamiliesMatchTheCpu) {
  SyntheticModelSpec gemma3 = family("gemma3", 6, 64, 4, 2, 32, 16);
  gemma3.rope_base = 1000000, gemma3.rope_linear_factor = 8;
  SyntheticModelSpec qwen2 = family("qwen2", 2, 128, 4, 2);
  qwen2.rope_base = 1000000;
  for (const SyntheticModelSpec& spec :
       {family("llama", 2, 96, 4, 2, 32), qwen2, family("qwen3", 2, 64, 4, 2, 32), family("phi3", 2, 96, 4, 2),
        family("phi3", 2, 96, 4, 4, 0, 24), family("gemma2", 4, 128, 4, 2, 0, 16), gemma3}) {
    SCOPED_TRACE(spec.arch + ", window " + std::to_string(spec.sliding_window));
    auto m = synthetic_family(spec);
    // The GeGLU families' tanhf differs from the host's std::tanh in its
    // last bits; f32 otherwise.
    expect_prefill_and_decode_match(m, {}, kForwardF32Rel);
    expect_same_greedy(m, 32);
  }
}

// Sliding windows in a prefill split into chunks (each chunk's first rows
// reach back into the previous chunk's positions, and past the window) and
// after a cached prefix: the prompt's 45 tokens as 7 + 20 + 18 on the
// device, against the CPU's one pass; then a sequence that shares the first
// 32 positions' blocks (a prefix-cache hit) prefills its own 13.
TEST_F(CudaForward, SlidingWindowAcrossChunksAndAfterAPrefixHit) {
  for (const std::string arch : {"gemma2", "gemma3"}) {
    SCOPED_TRACE(arch);
    auto model = synthetic_family(family(arch, arch == "gemma2" ? 4 : 6, 64, 4, 2, 32, 16));
    CpuReference cpu(model);
    auto gpu = make_backend("cuda", model, {});
    const Tokens toks = prompt_for(*model, 45, 7);
    const auto table = identity_table(gpu->num_blocks());
    Logits lc, lg;
    SequenceStep pc{toks, 0, cpu.table(), LogitsWanted::kAll};
    cpu.forward(pc, lc);
    int32_t at = 0;
    for (const int32_t n : {7, 20, 18}) {
      SequenceStep pg{std::span(toks).subspan(at, n), at, table, LogitsWanted::kAll};
      gpu->forward({&pg, 1}, lg);
      for (int32_t i = 0; i < n; ++i)
        expect_rel_close(lg.row(0, i), lc.row(0, at + i), kForwardF32Rel, "chunked row " + std::to_string(at + i));
      at += n;
    }
    // Blocks 0 and 1 (positions 0..31) are shared; the rest are the new
    // sequence's own, blocks 20 and up.
    std::vector<BlockId> shared{0, 1, 20, 21};
    Tokens other(toks.begin(), toks.begin() + 32);
    const Tokens tail = prompt_for(*model, 13, 8);
    other.insert(other.end(), tail.begin(), tail.end());
    SequenceStep oc{other, 0, cpu.table(), LogitsWanted::kAll};
    cpu.forward(oc, lc);
    SequenceStep og{std::span(other).subspan(32), 32, shared, LogitsWanted::kAll};
    gpu->forward({&og, 1}, lg);
    for (int32_t i = 0; i < 13; ++i)
      expect_rel_close(lg.row(0, i), lc.row(0, 32 + i), kForwardF32Rel, "after the hit, row " + std::to_string(32 + i));
  }
}

TEST_F(CudaForward, MemoryUtilizationSizesThePool) {
  BackendOptions opt;
  opt.memory_utilization = 0.05;  // of an H200's 141 GB: gigabytes, far more than one context
  auto be = make_backend("cuda", testing::stories(), opt);
  EXPECT_GT(be->kv_capacity().tokens(), be->config().context_length);
  opt.kv_budget_bytes = kv_budget_for_blocks(be->config(), KvType::kF32, 16, 10);  // the smaller of the two wins
  EXPECT_EQ(make_backend("cuda", testing::stories(), opt)->num_blocks(), 10);
}

}  // namespace
}  // namespace kvgate
