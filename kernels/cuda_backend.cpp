// The CUDA backend, the CPU backend's forward pass (engine/cpu/cpu_backend.cpp)
// on the device, kernel for kernel. One step flattens every sequence's new
// tokens into activation rows X [T][dim] (times embed_scale: gemma); per layer:
//   h      = rmsnorm(x) * attn_norm                      rmsnorm.h
//   qkv    = h Wqkv^T                                     gemm.h (fused Q, K, V; Q is q_dim wide)
//   qkv   += bias; q, k heads rmsnorm'd                   qkv_finish.h (the families that have them)
//   rope(q) in place, K/V[slot] <- rope(k), v             rope_kv_store.h (one kernel; the layer's table)
//   att    = attention over K/V[0..pos]                   paged_attention.h (decode rows)
//            (scale, soft-cap, window: the layer's)       prefill_attention.h (prefill tiles)
//   x     += att Wo^T                                     gemm.h, beta 1
//            or x += rmsnorm(att Wo^T) * post_norm        rmsnorm.h (gemma's post-norms)
//   h      = rmsnorm(x) * ffn_norm
//   x     += swiglu(h Wgate_up^T) Wdown^T                 swiglu.h (or GeGLU), gemm.h
//            (or post-normed, as above)
// then logits = (rmsnorm(x) * output_norm) Wout^T for the rows that want
// them (the norm gathers them), soft-capped for gemma (softcap.h), copied
// back through pinned memory.
//
// RMSNorm and SwiGLU write their rows in the type the next GEMM reads
// (Gemm::input_type: the weights' f16 or bf16, else f32), so no step
// narrows them in a pass of its own.
//
// A decode-only step of at most kMaxGraphRows rows is padded to the next
// bucket (1, 2, 4, ... 128 rows) and replayed as a CUDA graph captured for
// that bucket: a layer is some ten kernels, and at small batch launching
// them one by one from the host takes longer than running them. A bucket's
// first step runs eagerly (cuBLASLt picks its algorithms, buffers reach
// their size), its second is captured, every later one replays. A graph
// holds the addresses it was captured with, so it is captured again if any
// buffer it touches has moved (GraphPointers).
//
// Everything runs on one compute stream, synchronized once per step when
// the logits come back; block copies to and from the host run on their own
// stream (block_transfer.h). After a device fault (a sticky CUDA error) the
// backend refuses all further work, naming the first fault, so the engine
// ends requests with one clear error instead of undefined results.
//
// Thread ownership: one thread (the engine loop), as every Backend.
#include "kernels/cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/attention_batch.h"
#include "kernels/block_transfer.h"
#include "kernels/cuda_error.h"
#include "kernels/device_buffer.h"
#include "kernels/device_weights.h"
#include "kernels/embed.h"
#include "kernels/gemm.h"
#include "kernels/kv_pool_geometry.h"
#include "kernels/paged_attention.h"
#include "kernels/prefill_attention.h"
#include "kernels/qkv_finish.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope_kv_store.h"
#include "kernels/softcap.h"
#include "kernels/step_plan.h"
#include "kernels/stream.h"
#include "kernels/swiglu.h"
#include "engine/rope_angles.h"

namespace kvgate {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {

using namespace kvgate::cuda;

// Scratch is sized for this many rows before the free memory is measured,
// so the KV pool does not take what the first steps need (the scheduler's
// default step budget); larger steps grow it.
constexpr int64_t kReservedRows = 512;
constexpr int64_t kMaxGraphRows = 128;
constexpr int64_t kReservedLogitRows = kMaxGraphRows;

// The rows a decode step of n rows is padded to for its graph.
int64_t graph_bucket(int64_t n) {
  int64_t b = 1;
  while (b < n) b *= 2;
  return b;
}

// Every device address a captured step reads or writes outside the weights
// and the pool, which do not move.
struct GraphPointers {
  std::vector<const void*> p;
  bool operator==(const GraphPointers&) const = default;
};

class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() { reset(); }
  void reset() {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  // Captures what `queue` puts on `s` (which runs nothing while capturing)
  // and instantiates it. Capture is thread-local: the tiers' mover thread
  // may copy blocks on its own stream meanwhile.
  template <typename F>
  void capture(cudaStream_t s, F&& queue) {
    reset();
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      queue();
    } catch (...) {
      cudaStreamEndCapture(s, &graph);  // leaves the stream usable
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
    const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "cudaGraphInstantiate");
  }
  bool ready() const { return exec_ != nullptr; }
  void launch(cudaStream_t s) const { check(cudaGraphLaunch(exec_, s), "cudaGraphLaunch"); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// A decode bucket's graph and what it was captured over.
struct DecodeGraph {
  bool warmed = false;  // a padded step of this size ran eagerly
  GraphExec exec;
  GraphPointers pointers;
};

class TimingEvent {
 public:
  TimingEvent() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  ~TimingEvent() { cudaEventDestroy(e_); }
  void record(cudaStream_t s) { check(cudaEventRecord(e_, s), "cudaEventRecord"); }
  // Seconds from `start` to this; both recorded and complete.
  double seconds_since(const TimingEvent& start) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.e_, e_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

void check_shape(const ModelConfig& c) {
  auto bad = [&](const std::string& why) { throw Error("cuda backend: the model's shape is not supported: " + why); };
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0) bad("n_heads is not a multiple of n_kv_heads");
  if (c.head_dim <= 0 || c.head_dim > kMaxHeadDim) bad("head_dim " + std::to_string(c.head_dim) + " (at most 256)");
  if (c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim) bad("rope_dim " + std::to_string(c.rope_dim));
  // Everything else ModelConfig describes has a kernel here: Q wider or
  // narrower than the embedding, either RoPE pairing, Q/K/V biases, Q/K
  // norms, gemma's embedding scale, GeGLU, post-norms, query scale,
  // soft-capping and sliding windows (with their own RoPE table).
  if (c.ffn_activation != Activation::kSilu && c.ffn_activation != Activation::kGeluTanh)
    bad("an FFN activation other than SiLU and GELU (tanh)");
}

int select_device() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    cudaGetLastError();
    throw Error(std::string("cuda backend: no CUDA device (") +
                (e != cudaSuccess ? cudaGetErrorString(e) : "the runtime sees none") +
                "); use --backend cpu, or auto to fall back to it");
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  return 0;
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

class CudaBackend final : public Backend {
 public:
  CudaBackend(const ModelConfig& c, const WeightsView& w, const BackendOptions& opt)
      : c_((check_shape(c), c)),
        kv_type_(opt.kv_type),
        use_graphs_(opt.device_graphs),
        device_(select_device()),
        gemm_(stream_.get()),
        weights_(DeviceWeights::upload(c_, w, stream_.get())) {
    const bool halves = c_.rope_style == RopeStyle::kHalves;
    const RopeAngles rope = rope_angles(c_, c_.context_length);
    rope_cos_ = upload(rope.cos, "rope table");
    rope_sin_ = upload(rope.sin, "rope table");
    rope_ = {rope_cos_.as<float>(), rope_sin_.as<float>(), rope.half, halves};
    if (c_.sliding_window > 0) {  // the sliding layers' own base and scale, as the CPU's rope_of
      const RopeAngles swa = rope_angles(c_, c_.context_length, true);
      rope_swa_cos_ = upload(swa.cos, "rope table (sliding layers)");
      rope_swa_sin_ = upload(swa.sin, "rope table (sliding layers)");
      rope_swa_ = {rope_swa_cos_.as<float>(), rope_swa_sin_.as<float>(), swa.half, halves};
    }
    ensure_scratch(kReservedRows, kReservedLogitRows);
    // The GEMMs' widening scratch (for block-quantized matrices) at its
    // final size, before the pool takes the free memory and before any
    // graph is captured.
    for (const DeviceMatrix* m : weights_.matrices()) gemm_.reserve(*m);
    // The decode workspace at its largest over the graph buckets, so that
    // no bucket's first step moves it under the graphs already captured.
    for (int64_t b = 1; b <= kMaxGraphRows; b *= 2)
      ensure_bytes(decode_ws_, paged_decode_workspace_bytes(shape(), static_cast<int32_t>(b)),
                   "decode attention workspace");
    check(cudaStreamSynchronize(stream_.get()), "start-up");

    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    int64_t budget = opt.kv_budget_bytes;
    if (opt.memory_utilization > 0) {
      if (opt.memory_utilization > 1) throw Error("cuda backend: gpu_memory_utilization must be in (0, 1]");
      // vLLM's rule: the share of the whole device, less what is in use now
      // (the weights, the workspace, and anything other processes hold).
      const auto share = static_cast<int64_t>(static_cast<double>(total) * opt.memory_utilization);
      const int64_t left = share - static_cast<int64_t>(total - free);
      if (left <= 0)
        throw Error("cuda backend: gpu_memory_utilization " + std::to_string(opt.memory_utilization) + " of " +
                    std::to_string(total >> 20) + " MiB leaves nothing for the KV cache: " +
                    std::to_string((total - free) >> 20) + " MiB are in use after the weights");
      budget = budget > 0 ? std::min(budget, left) : left;
    }
    cap_ = kvgate::kv_capacity(c_, kv_type_, opt.block_size, budget);
    geometry_ = {c_.n_layers, cap_.block_size, c_.kv_dim()};
    pool_ = DeviceBuffer(static_cast<size_t>(cap_.bytes()), "the KV pool (lower --kv-budget or gpu_memory_utilization)");
    // Zeroed as the CPU's pool is, so an unwritten slot copies out the same bytes.
    check(cudaMemsetAsync(pool_.as(), 0, pool_.bytes(), stream_.get()), "KV pool clear");
    transfer_ = std::make_unique<BlockTransfer>(pool_.as<std::byte>(), block_bytes(), cap_.num_blocks);
    staging_ = PinnedBuffer(block_bytes(), "block staging");
    check(cudaStreamSynchronize(stream_.get()), "start-up");
    report(free, total);
  }

  CudaStepTiming last_step_timing() const { return timing_; }

  std::string_view name() const override { return "cuda"; }
  const ModelConfig& config() const override { return c_; }
  KvLayout kv_layout() const override { return {kv_type_}; }
  const KvCapacity& kv_capacity() const override { return cap_; }

  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    refuse_if_failed();
    plan_.build(batch, c_, cap_.block_size, cap_.num_blocks);  // throws before anything is queued
    guarded([&] { run(batch, out); });
  }

  void copy_block_to_host(BlockId b, std::span<std::byte> dst) const override {
    refuse_if_failed();
    if (dst.size() != block_bytes()) throw Error("copy_block_to_host: buffer is not one block");
    std::lock_guard lock(staging_mu_);
    guarded([&] {
      transfer_->to_host({&b, 1}, staging_.as<std::byte>(), stream_.get());
      transfer_->wait();
      std::memcpy(dst.data(), staging_.as(), dst.size());
    });
  }

  void copy_block_from_host(BlockId b, std::span<const std::byte> src) override {
    refuse_if_failed();
    if (src.size() != block_bytes()) throw Error("copy_block_from_host: buffer is not one block");
    std::lock_guard lock(staging_mu_);
    guarded([&] {
      std::memcpy(staging_.as(), src.data(), src.size());
      transfer_->from_host({&b, 1}, staging_.as<std::byte>(), stream_.get());
      transfer_->wait();  // the staging buffer is reused by the next call
    });
  }

  void copy_block(BlockId src, BlockId dst) override {
    refuse_if_failed();
    if (src < 0 || src >= cap_.num_blocks || dst < 0 || dst >= cap_.num_blocks)
      throw Error("copy_block: bad block id");
    if (src == dst) return;
    // Queued on the compute stream: ordered before the step that writes the copy.
    guarded([&] {
      check(cudaMemcpyAsync(pool_.as<std::byte>() + static_cast<size_t>(dst) * block_bytes(),
                            pool_.as<std::byte>() + static_cast<size_t>(src) * block_bytes(), block_bytes(),
                            cudaMemcpyDeviceToDevice, stream_.get()),
            "copy_block");
    });
  }

 private:
  template <typename F>
  void guarded(F&& f) const {
    try {
      f();
    } catch (const CudaError& e) {
      std::lock_guard lock(failed_mu_);
      if (!e.recoverable() && failed_.empty()) failed_ = e.what();
      throw;
    }
  }
  std::string failure() const override {
    std::lock_guard lock(failed_mu_);
    return failed_;
  }

  void refuse_if_failed() const {
    if (std::string why = failure(); !why.empty())
      throw Error("cuda backend: the device failed earlier and takes no more work: " + why);
  }

  template <typename T>
  DeviceBuffer upload(const std::vector<T>& v, const char* what) {
    DeviceBuffer b(v.size() * sizeof(T), what);
    check(cudaMemcpyAsync(b.as(), v.data(), b.bytes(), cudaMemcpyHostToDevice, stream_.get()), what);
    check(cudaStreamSynchronize(stream_.get()), what);
    return b;
  }

  void ensure_scratch(int64_t rows, int64_t logit_rows) {
    const auto f = [](int64_t n, int64_t width) { return static_cast<size_t>(n * width) * sizeof(float); };
    const int64_t d = c_.dim, qd = c_.q_dim(), kvd = c_.kv_dim(), ff = c_.ffn_dim;
    ensure_bytes(x_, f(rows, d), "activations");
    ensure_bytes(h_, f(rows, d), "activations");
    ensure_bytes(att_, f(rows, qd), "attention output");
    ensure_bytes(qkv_, f(rows, qd + 2 * kvd), "q, k, v");
    ensure_bytes(gate_up_, f(rows, 2 * ff), "gate, up");
    ensure_bytes(act_, f(rows, ff), "swiglu output");
    ensure_bytes(logits_, f(logit_rows, c_.vocab_size), "logits");
    ensure_bytes(logits_host_, f(logit_rows, c_.vocab_size), "logits (host)");
  }

  void run(std::span<const SequenceStep> batch, Logits& out) {
    const cudaStream_t s = stream_.get();
    const auto R = static_cast<int64_t>(plan_.head_rows.size());  // before padding: the logits wanted
    const bool graph = use_graphs_ && plan_.prefill.empty() && plan_.rows() <= kMaxGraphRows;
    if (graph) plan_.pad_decode(graph_bucket(plan_.rows()));
    const int64_t T = plan_.rows(), head = static_cast<int64_t>(plan_.head_rows.size());
    ensure_scratch(T, head);
    ensure_bytes(decode_ws_, paged_decode_workspace_bytes(shape(), static_cast<int32_t>(plan_.decode.size())),
                 "decode attention workspace");

    step_start_.record(s);
    const DeviceStep step = uploader_.upload(plan_, s);
    bool replayed = false;
    if (graph)
      replayed = run_graph(step, T, head);
    else
      queue_step(step, T, head);
    out.reset(batch, c_.vocab_size);
    const size_t logit_bytes = static_cast<size_t>(R) * c_.vocab_size * sizeof(float);
    if (R > 0)
      check(cudaMemcpyAsync(logits_host_.as(), logits_.as(), logit_bytes, cudaMemcpyDeviceToHost, s), "logits copy");
    step_end_.record(s);
    check(cudaStreamSynchronize(s), "forward");  // where a fault inside a kernel surfaces
    timing_ = {step_end_.seconds_since(step_start_), replayed};
    if (R > 0) std::memcpy(out.row_data(0), logits_host_.as(), logit_bytes);
  }

  // A padded decode step through its bucket's graph: eagerly the first
  // time, captured the second, replayed after. True when a graph ran.
  bool run_graph(const DeviceStep& step, int64_t T, int64_t head) {
    const cudaStream_t s = stream_.get();
    DecodeGraph& g = graphs_[T];
    const GraphPointers now = graph_pointers(step);
    if (!g.warmed) {
      g.warmed = true;
      queue_step(step, T, head);
      return false;
    }
    if (!g.exec.ready() || g.pointers != now) {
      g.exec.capture(s, [&] { queue_step(step, T, head); });
      g.pointers = now;
    }
    g.exec.launch(s);
    return true;
  }

  GraphPointers graph_pointers(const DeviceStep& step) const {
    GraphPointers g{{step.tokens, step.pos, step.slots, step.decode, step.tables, step.head_rows, x_.as(), h_.as(),
                     att_.as(), qkv_.as(), gate_up_.as(), act_.as(), logits_.as(), decode_ws_.as()}};
    for (const void* p : gemm_.scratch()) g.p.push_back(p);
    return g;
  }

  // The attention of a layer: the model's scale and soft-cap, and the
  // window on its sliding layers (the CPU's shape_of). Without a layer: what
  // sizes the decode workspace, which the window does not change.
  AttentionShape shape(int32_t layer = -1) const {
    return {c_.n_heads, c_.n_kv_heads, c_.head_dim, c_.attention_scale(), c_.attn_softcap,
            layer >= 0 && c_.is_sliding(layer) ? c_.sliding_window : 0};
  }
  const RopeTable& rope_of(int32_t layer) const { return c_.is_sliding(layer) ? rope_swa_ : rope_; }

  // The step's kernels for T rows, `head` of them wanting logits, on the
  // compute stream: the forward pass of the file's comment.
  void queue_step(const DeviceStep& step, int64_t T, int64_t head) {
    const cudaStream_t s = stream_.get();
    const int32_t d = c_.dim, qd = c_.q_dim(), kvd = c_.kv_dim(), ff = c_.ffn_dim, qkvw = qd + 2 * kvd;
    float *x = x_.as<float>(), *att = att_.as<float>(), *qkv = qkv_.as<float>(), *gate_up = gate_up_.as<float>();
    const auto n_decode = static_cast<int32_t>(plan_.decode.size());
    const auto n_tiles = static_cast<int32_t>(plan_.prefill.size());
    const bool gelu = c_.ffn_activation == Activation::kGeluTanh;
    // A block's output joins the residual x: directly (the GEMM adds, beta
    // 1), or through gemma's post-norm (the GEMM writes h in f32, the norm
    // adds it).
    const auto linear_into_residual = [&](const DeviceMatrix& w, const void* in, bool typed, const DeviceBuffer& post) {
      float* const dst = post.as() ? h_.as<float>() : x;
      if (typed)
        gemm_.linear_typed(w, in, T, dst, d, post.as() ? 0.0f : 1.0f);
      else
        gemm_.linear(w, static_cast<const float*>(in), T, dst, d, post.as() ? 0.0f : 1.0f);
      if (post.as()) rmsnorm_add_rows(h_.as<float>(), T, post.as<float>(), d, c_.rms_eps, x, s);
    };

    embed_rows(weights_.embd_type, weights_.embd, weights_.embd_row_bytes, step.tokens, T, d, x, s, c_.embed_scale);
    for (int32_t l = 0; l < c_.n_layers; ++l) {
      const DeviceLayer& L = weights_.layers[l];
      const AttentionShape sh = shape(l);
      const QkvRows rows{qkv, qkvw, c_.n_heads, c_.head_dim};
      rmsnorm_rows(x, nullptr, T, L.attn_norm.as<float>(), d, c_.rms_eps, h_.as(), Gemm::input_type(L.qkv), s);
      gemm_.linear_typed(L.qkv, h_.as(), T, qkv, qkvw, 0.0f);
      qkv_finish(rows, c_.n_kv_heads, T, L.qkv_bias.as<float>(), L.q_norm.as<float>(), L.k_norm.as<float>(),
                 c_.rms_eps, s);
      rope_store_kv(rows, step.pos, step.slots, T, rope_of(l), geometry_, kv_type_, pool_.as(), l, s);
      paged_decode_attention(geometry_, kv_type_, pool_.as(), l, sh, qkv, qkvw, att, qd, step.decode, n_decode,
                             step.tables, decode_ws_.as(), s);
      prefill_attention(geometry_, kv_type_, pool_.as(), l, sh, qkv, qkvw, att, qd, step.prefill, n_tiles,
                        step.tables, s);
      linear_into_residual(L.wo, att, false, L.attn_post_norm);
      rmsnorm_rows(x, nullptr, T, L.ffn_norm.as<float>(), d, c_.rms_eps, h_.as(), Gemm::input_type(L.gate_up), s);
      gemm_.linear_typed(L.gate_up, h_.as(), T, gate_up, 2 * ff, 0.0f);
      (gelu ? geglu_rows : swiglu_rows)(gate_up, T, ff, act_.as(), Gemm::input_type(L.down), s);
      linear_into_residual(L.down, act_.as(), true, L.ffn_post_norm);
    }
    if (head > 0) {
      rmsnorm_rows(x, step.head_rows, head, weights_.output_norm.as<float>(), d, c_.rms_eps, h_.as(),
                   Gemm::input_type(weights_.output), s);
      gemm_.linear_typed(weights_.output, h_.as(), head, logits_.as<float>(), c_.vocab_size, 0.0f);
      if (c_.final_softcap > 0) softcap_values(logits_.as<float>(), head * c_.vocab_size, c_.final_softcap, s);
    }
  }

  void report(size_t free_after_weights, size_t total) const {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    std::fprintf(stderr,
                 "kvgate cuda: %s (sm_%d%d, %.0f MiB): weights %.1f MiB, %.0f MiB free after weights; "
                 "KV cache %s, %lld tokens (%d blocks of %d, %.1f MiB); maximum concurrency %.2fx for "
                 "%d-token requests\n",
                 prop.name, prop.major, prop.minor, mib(total), mib(weights_.bytes), mib(free_after_weights),
                 std::string(kv_type_name(kv_type_)).c_str(), static_cast<long long>(cap_.tokens()), cap_.num_blocks,
                 cap_.block_size, mib(static_cast<size_t>(cap_.bytes())),
                 static_cast<double>(cap_.tokens()) / c_.context_length, c_.context_length);
  }

  const ModelConfig c_;
  const KvType kv_type_;
  const bool use_graphs_;
  const int device_;
  Stream stream_;
  Gemm gemm_;
  DeviceWeights weights_;
  DeviceBuffer rope_cos_, rope_sin_, rope_swa_cos_, rope_swa_sin_;
  RopeTable rope_{}, rope_swa_{};  // the global layers' and (sliding_window > 0) the sliding layers'
  KvCapacity cap_;
  KvPoolGeometry geometry_;
  DeviceBuffer pool_;
  std::unique_ptr<BlockTransfer> transfer_;
  // One block, for the single-block copies: the mover's copies down and the
  // restore's copies up (from several threads) take turns with it.
  PinnedBuffer staging_;
  mutable std::mutex staging_mu_;
  mutable std::mutex failed_mu_;
  mutable std::string failed_;  // the first device fault; set: every call refuses
  // Per-step state, reused across steps.
  StepPlan plan_;
  StepUploader uploader_;
  DeviceBuffer x_, h_, att_, qkv_, gate_up_, act_, logits_, decode_ws_;
  PinnedBuffer logits_host_;
  std::map<int64_t, DecodeGraph> graphs_;  // by padded row count
  TimingEvent step_start_, step_end_;
  CudaStepTiming timing_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& config, const WeightsView& weights,
                                           const BackendOptions& opt) {
  return std::make_unique<CudaBackend>(config, weights, opt);
}

CudaStepTiming cuda_last_step_timing(const Backend& backend) {
  const auto* cuda = dynamic_cast<const CudaBackend*>(&backend);
  if (!cuda) throw Error("cuda_last_step_timing: the backend is " + std::string(backend.name()) + ", not cuda");
  return cuda->last_step_timing();
}

}  // namespace kvgate
