// The CPU backend: the reference forward pass of a Llama model over a paged
// KV cache. One step flattens every sequence's new tokens into one activation
// matrix X [T][dim], so the linear layers of a prefill and of a batch of
// decodes are the same matrix products; only attention looks at which
// sequence a row belongs to.
//
// Per layer, as the math reads (gemma's extras in brackets):
//   x   = embedding [* sqrt(dim)]
//   h   = rmsnorm(x) * attn_norm
//   q,k,v = h Wq^T (+ bq), h Wk^T (+ bk), h Wv^T (+ bv)
//   q,k   = rmsnorm of each head * q_norm, k_norm  (qwen3)
//   rope(q, k) at each row's position       (adjacent or halves pairing)
//   K/V[pos] <- k, v                        (into the sequence's own block, in the pool's element type)
//   x  += [rmsnorm *] attention(q, K/V[0..pos]) Wo^T   (softmax of scaled
//         [soft-capped] scores, over the last `window` positions on sliding layers)
//   h   = rmsnorm(x) * ffn_norm
//   x  += [rmsnorm *] (silu or gelu(h Wgate^T) * h Wup^T) Wdown^T
// then logits = (rmsnorm(x) * output_norm) Wout^T [soft-capped] for the rows
// that want them.
//
// The last layer's output is read only by the rows that want logits
// (usually a sequence's last token; none for a prompt chunk before its
// last), so, as llama.cpp does, that layer computes K and V for every row
// (later steps attend to them) and everything else for those rows alone:
// about a twelfth of a prefill step less on a 12-layer model.
//
// Threads: OpenMP across rows, output features and (token, KV head) pairs;
// OpenBLAS shares the same OpenMP pool. Driven by one caller thread.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/attention.h"
#include "engine/cpu/matmul.h"
#include "engine/cpu/rowwise.h"
#include "engine/cpu/tanh_exp.h"
#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/cpu/kv_pool.h"
#include "engine/model/model.h"

namespace kvgate {
namespace {

// Rows below this count run the row-wise loops on the calling thread: a
// decode step's handful of rows is cheaper than waking the team.
constexpr int64_t kParallelRows = 8;
// Queries per attention work item in a prefill: small enough to spread over
// the cores and skip most of the causal mask, large enough for sgemm.
constexpr int32_t kAttendChunk = 64;

class CpuBackend final : public Backend {
 public:
  CpuBackend(std::shared_ptr<const Model> model, const BackendOptions& opt)
      : model_(std::move(model)),
        c_(model_->config()),
        w_(model_->weights()),
        cap_(kvgate::kv_capacity(c_, opt.kv_type, opt.block_size, opt.kv_budget_bytes)),
        kv_(opt.kv_type, c_.n_layers, cap_.num_blocks, cap_.block_size, c_.kv_dim()),
        rope_(c_) {
    if (c_.sliding_window > 0) rope_sliding_.emplace(c_, true);
  }

  std::string_view name() const override { return "cpu"; }
  const ModelConfig& config() const override { return c_; }
  KvLayout kv_layout() const override { return {kv_.type()}; }
  const KvCapacity& kv_capacity() const override { return cap_; }
  void copy_block_to_host(BlockId b, std::span<std::byte> dst) const override { kv_.copy_block_out(b, dst); }
  void copy_block_from_host(BlockId b, std::span<const std::byte> src) override { kv_.copy_block_in(b, src); }
  void copy_block(BlockId src, BlockId dst) override { kv_.copy_block(src, dst); }

  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    validate(batch);
    flatten(batch);
    out.reset(batch, c_.vocab_size);
    const int64_t T = static_cast<int64_t>(row_seq_.size());
    const int64_t d = c_.dim, qd = c_.q_dim(), kvd = c_.kv_dim(), ff = c_.ffn_dim;
    x_.resize(T * d);
    h_.resize(T * d);
    q_.resize(T * qd);
    k_.resize(T * kvd);
    v_.resize(T * kvd);
    att_.resize(T * qd);
    gate_.resize(T * ff);
    up_.resize(T * ff);
    select_logit_rows(batch, out);
    // Every row wants logits (a decode step, or LogitsWanted::kAll): then
    // logit_rows_ is 0, 1, ..., T - 1 and the last layer is like the others.
    const bool every_row = static_cast<int64_t>(logit_rows_.size()) == T;

    for (int64_t t = 0; t < T; ++t) {
      dequantize_row(w_.token_embd.type, w_.token_embd.row(row_token_[t]), &x_[t * d], d);
      if (c_.embed_scale != 1.0f)
        for (int64_t i = 0; i < d; ++i) x_[t * d + i] *= c_.embed_scale;
    }

    for (int32_t l = 0; l < c_.n_layers; ++l) {
      const LayerWeights& lw = w_.layers[l];
      if (l == c_.n_layers - 1 && !every_row) {
        last_layer_for_logit_rows(batch, lw, T);
        break;
      }
      norm_rows(lw.attn_norm, T);
      const MatmulTarget qkv[] = {{&lw.wq, q_.data()}, {&lw.wk, k_.data()}, {&lw.wv, v_.data()}};
      matmul_many(qkv, h_.data(), T);
      finish_q(lw, T);
      finish_kv(lw, T);
      rope_q(l, T);
      store_kv(batch, l, T);
      attention(batch, l, T);
      feed_forward(lw, T);
    }
    head(out);
  }

 private:
  void validate(std::span<const SequenceStep> batch) const {
    if (batch.empty()) throw Error("forward: empty batch");
    const int32_t B = kv_.block_size();
    for (size_t s = 0; s < batch.size(); ++s) {
      const SequenceStep& st = batch[s];
      const std::string who = "forward: sequence " + std::to_string(s) + ": ";
      if (st.tokens.empty()) throw Error(who + "no tokens");
      const int64_t end = int64_t{st.start_pos} + static_cast<int64_t>(st.tokens.size());
      if (st.start_pos < 0 || end > c_.context_length)
        throw Error(who + "positions up to " + std::to_string(end) + " exceed the context length " +
                    std::to_string(c_.context_length));
      if (static_cast<int64_t>(st.block_table.size()) * B < end)
        throw Error(who + "block table covers " + std::to_string(st.block_table.size() * B) + " positions, needs " +
                    std::to_string(end));
      for (int64_t b = 0; b < (end + B - 1) / B; ++b)
        if (st.block_table[b] < 0 || st.block_table[b] >= kv_.n_blocks())
          throw Error(who + "block id " + std::to_string(st.block_table[b]) + " is outside the pool");
      for (TokenId id : st.tokens)
        if (id < 0 || id >= c_.vocab_size) throw Error(who + "token id " + std::to_string(id) + " is outside the vocabulary");
    }
  }

  void flatten(std::span<const SequenceStep> batch) {
    row_seq_.clear();
    row_pos_.clear();
    row_token_.clear();
    for (size_t s = 0; s < batch.size(); ++s)
      for (size_t i = 0; i < batch[s].tokens.size(); ++i) {
        row_seq_.push_back(static_cast<int32_t>(s));
        row_pos_.push_back(batch[s].start_pos + static_cast<int32_t>(i));
        row_token_.push_back(batch[s].tokens[i]);
      }
  }

  void norm_rows(const float* weight, int64_t T) {
    const int64_t d = c_.dim;
#pragma omp parallel for if (T >= kParallelRows)
    for (int64_t t = 0; t < T; ++t) rmsnorm(&h_[t * d], &x_[t * d], weight, d, c_.rms_eps);
  }

  // RMSNorm in place of each of `pieces` vectors of `width` values in n
  // token rows: gemma's norms after attention and the FFN (a piece a row),
  // qwen3's and gemma3's Q/K norms (a piece a head).
  void norm_in_place(float* rows, const float* weight, int64_t n, int64_t pieces, int64_t width) {
    const int64_t items = n * pieces;
#pragma omp parallel for if (n >= kParallelRows)
    for (int64_t i = 0; i < items; ++i) rmsnorm(rows + i * width, rows + i * width, weight, width, c_.rms_eps);
  }

  void add_rows(int64_t T) {
    const int64_t n = T * c_.dim;
#pragma omp parallel for if (T >= kParallelRows)
    for (int64_t i = 0; i < n; ++i) x_[i] += h_[i];
  }

  // The flat rows whose logits `out` holds, in its row order.
  void select_logit_rows(std::span<const SequenceStep> batch, const Logits& out) {
    logit_rows_.clear();
    int64_t first_flat = 0;
    for (size_t s = 0; s < batch.size(); ++s) {
      const int64_t n = static_cast<int64_t>(batch[s].tokens.size());
      const int32_t rows = out.rows(s);
      for (int32_t i = 0; i < rows; ++i) logit_rows_.push_back(first_flat + (rows == 1 ? n - 1 : i));
      first_flat += n;
    }
  }

  // What follows the Q projection before RoPE, on q_'s first n rows: the
  // bias, then each head's RMSNorm (the families that have them).
  void finish_q(const LayerWeights& lw, int64_t n) {
    const int64_t qd = c_.q_dim();
    if (lw.bq) add_bias(q_.data(), lw.bq, n, qd);
    if (lw.q_norm) norm_in_place(q_.data(), lw.q_norm, n, c_.n_heads, c_.head_dim);
  }
  // The same for K (which RoPE turns in store_kv) and V, on all T rows.
  void finish_kv(const LayerWeights& lw, int64_t T) {
    const int64_t kvd = c_.kv_dim();
    if (lw.bk) add_bias(k_.data(), lw.bk, T, kvd);
    if (lw.bv) add_bias(v_.data(), lw.bv, T, kvd);
    if (lw.k_norm) norm_in_place(k_.data(), lw.k_norm, T, c_.n_kv_heads, c_.head_dim);
  }
  static void add_bias(float* rows, const float* bias, int64_t n, int64_t width) {
#pragma omp parallel for if (n >= kParallelRows)
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < width; ++j) rows[t * width + j] += bias[j];
  }

  const RopeTable& rope_of(int32_t layer) const { return c_.is_sliding(layer) ? *rope_sliding_ : rope_; }
  AttentionShape shape_of(int32_t layer) const {
    return {c_.head_dim, c_.group_size(), c_.attention_scale(), c_.attn_softcap,
            c_.is_sliding(layer) ? c_.sliding_window : 0};
  }

  // RoPE on the first n rows of q_, which hold the flat rows *rows (rows
  // 0 to n - 1 when rows is null).
  void rope_q(int32_t layer, int64_t n, const std::vector<int64_t>* rows = nullptr) {
    const int64_t qd = c_.q_dim();
    const RopeTable& rope = rope_of(layer);
#pragma omp parallel for if (n >= kParallelRows)
    for (int64_t i = 0; i < n; ++i)
      rope.apply(&q_[i * qd], row_pos_[rows ? (*rows)[i] : i], c_.n_heads, c_.head_dim);
  }

  // K gets its RoPE, then K and V go into the rows' blocks.
  void store_kv(std::span<const SequenceStep> batch, int32_t layer, int64_t T) {
    const int64_t kvd = c_.kv_dim();
    const int32_t B = kv_.block_size();
    const RopeTable& rope = rope_of(layer);
#pragma omp parallel for if (T >= kParallelRows)
    for (int64_t t = 0; t < T; ++t) {
      const int32_t pos = row_pos_[t];
      rope.apply(&k_[t * kvd], pos, c_.n_kv_heads, c_.head_dim);
      const BlockId b = batch[row_seq_[t]].block_table[pos / B];
      kv_.store(layer, b, pos % B, &k_[t * kvd], &v_[t * kvd]);  // narrowed to the pool's type
    }
  }

  // The rest of a layer once attention has written att_, for the first n rows.
  void feed_forward(const LayerWeights& lw, int64_t n) {
    const int64_t ff = c_.ffn_dim;
    matmul(lw.wo, att_.data(), n, h_.data());
    if (lw.attn_post_norm) norm_in_place(h_.data(), lw.attn_post_norm, n, 1, c_.dim);
    add_rows(n);
    norm_rows(lw.ffn_norm, n);
    const MatmulTarget gate_up[] = {{&lw.w_gate, gate_.data()}, {&lw.w_up, up_.data()}};
    matmul_many(gate_up, h_.data(), n);
    const bool gelu = c_.ffn_activation == Activation::kGeluTanh;
#pragma omp parallel for if (n >= kParallelRows)
    for (int64_t t = 0; t < n; ++t) (gelu ? geglu : swiglu)(&gate_[t * ff], &up_[t * ff], ff);
    matmul(lw.w_down, gate_.data(), n, h_.data());
    if (lw.ffn_post_norm) norm_in_place(h_.data(), lw.ffn_post_norm, n, 1, c_.dim);
    add_rows(n);
  }

  // The last layer when only some rows want logits: K and V of all T rows
  // are computed and stored; then the rows that want logits move to the
  // front of x_ and h_ (logit_rows_ ascends, so each moves to or before
  // itself) and only they get Q, attention and the rest. Each attends alone
  // over its sequence's positions, as a decode token does (rows of a
  // LogitsWanted::kAll run in a batch that is not all kAll too: correct,
  // if slower than attend_rows).
  void last_layer_for_logit_rows(std::span<const SequenceStep> batch, const LayerWeights& lw, int64_t T) {
    const int64_t d = c_.dim, qd = c_.q_dim();
    const int32_t layer = c_.n_layers - 1;
    norm_rows(lw.attn_norm, T);
    const MatmulTarget kv[] = {{&lw.wk, k_.data()}, {&lw.wv, v_.data()}};
    matmul_many(kv, h_.data(), T);
    finish_kv(lw, T);
    store_kv(batch, layer, T);
    const auto m = static_cast<int64_t>(logit_rows_.size());
    if (m == 0) return;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t t = logit_rows_[i];
      if (t == i) continue;
      std::copy_n(&x_[t * d], d, &x_[i * d]);
      std::copy_n(&h_[t * d], d, &h_[i * d]);
    }
    matmul(lw.wq, h_.data(), m, q_.data());
    finish_q(lw, m);
    rope_q(layer, m, &logit_rows_);
    const int32_t nkv = c_.n_kv_heads, G = c_.group_size(), hd = c_.head_dim;
    const AttentionShape shape = shape_of(layer);
    const int64_t items = m * nkv;
    size_thread_scratch();
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
    for (int64_t it = 0; it < items; ++it) {
      const int64_t i = it / nkv, t = logit_rows_[i];
      const int32_t g = static_cast<int32_t>(it % nkv);
      const int64_t off = i * qd + static_cast<int64_t>(g) * G * hd;
      attend(kv_, layer, batch[row_seq_[t]].block_table, row_pos_[t] + 1, g, shape, &q_[off], &att_[off],
             thread_scratch().scores);
    }
    feed_forward(lw, m);
  }

  // Runs of attend_rows_min() or more of one sequence's tokens (prefill
  // chunks, a prefix-cache hit's suffix) attend as matrix products, in
  // chunks of kAttendChunk queries so each chunk only sees the positions it
  // needs; shorter runs and single tokens (decode) attend one by one. A long
  // run's K/V are gathered once per KV head for all of its chunks, in a
  // first pass across the team; then every (chunk or token, KV head) item
  // runs, the costliest (latest) chunks first so that the dynamic schedule
  // ends evenly.
  void attention(std::span<const SequenceStep> batch, int32_t layer, int64_t T) {
    const int64_t qd = c_.q_dim();
    const int32_t nkv = c_.n_kv_heads, G = c_.group_size(), hd = c_.head_dim;
    const AttentionShape shape = shape_of(layer);
    items_.clear();
    gathers_.clear();
    int64_t row = 0;
    for (const SequenceStep& st : batch) {
      const auto n = static_cast<int32_t>(st.tokens.size());
      if (n >= attend_rows_min(hd)) {
        const auto first = static_cast<int32_t>(gathers_.size());
        for (int32_t g = 0; g < nkv; ++g) gathers_.push_back({row, g});
        for (int32_t i = (n - 1) / kAttendChunk * kAttendChunk; i >= 0; i -= kAttendChunk)
          for (int32_t g = 0; g < nkv; ++g) items_.push_back({row + i, std::min(kAttendChunk, n - i), g, first + g});
      } else {
        for (int32_t i = 0; i < n; ++i)
          for (int32_t g = 0; g < nkv; ++g) items_.push_back({row + i, 1, g, -1});
      }
      row += n;
    }
    if (gathered_.size() < gathers_.size()) gathered_.resize(gathers_.size());
    size_thread_scratch();
    const auto n_gathers = static_cast<int64_t>(gathers_.size());
    const auto work = static_cast<int64_t>(items_.size());
    // Parallel once the step attends over enough positions to pay for the team.
    const int64_t positions = static_cast<int64_t>(row_pos_.back()) * T;
#pragma omp parallel if (work > 1 && positions * c_.dim >= (int64_t{1} << 16))
    {
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < n_gathers; ++i) {
        const Gather gt = gathers_[i];
        // The run's last token sees every position its chunks need.
        const int32_t seq = row_seq_[gt.row];
        const int32_t n_ctx = batch[seq].start_pos + static_cast<int32_t>(batch[seq].tokens.size());
        gather_kv(kv_, layer, batch[seq].block_table, n_ctx, gt.kv_head, hd, gathered_[i]);
      }
      AttentionScratch& mine = thread_scratch();
#pragma omp for schedule(dynamic, 1)
      for (int64_t i = 0; i < work; ++i) {
        const AttentionItem it = items_[i];
        const int64_t off = it.row * qd + static_cast<int64_t>(it.kv_head) * G * hd;
        if (it.gathered < 0)
          attend(kv_, layer, batch[row_seq_[it.row]].block_table, row_pos_[it.row] + 1, it.kv_head, shape, &q_[off],
                 &att_[off], mine.scores);
        else
          attend_rows(gathered_[it.gathered], row_pos_[it.row], it.n, shape, &q_[off], &att_[off], qd, mine.rows);
      }
    }
  }

  // Attention's per-thread scratch: sized for the team before a parallel
  // region, then each thread's own inside it.
  void size_thread_scratch() {
    if (scratch_.size() < static_cast<size_t>(omp_get_max_threads())) scratch_.resize(omp_get_max_threads());
  }
  struct AttentionScratch;
  AttentionScratch& thread_scratch() { return scratch_[static_cast<size_t>(omp_get_thread_num())]; }

  // Logits of the rows that want them, which are x_'s first rows in order:
  // every row, or those last_layer_for_logit_rows moved to the front.
  void head(Logits& out) {
    const int32_t m = out.total_rows();
    if (m == 0) return;
    const int64_t d = c_.dim;
    for (int32_t r = 0; r < m; ++r) rmsnorm(&h_[r * d], &x_[r * d], w_.output_norm, d, c_.rms_eps);
    matmul(w_.output, h_.data(), m, out.row_data(0));
    if (c_.final_softcap > 0) {  // gemma 2: as llama.cpp computes it, times 1 / cap, tanh, times cap
      float* l = out.row_data(0);
      const float inv = 1.0f / c_.final_softcap;
      const int64_t n = static_cast<int64_t>(m) * c_.vocab_size;
      for (int64_t i = 0; i < n; ++i) l[i] = cpu::tanh1(l[i] * inv) * c_.final_softcap;
    }
  }

  std::shared_ptr<const Model> model_;
  const ModelConfig& c_;
  const LlamaWeights& w_;
  const KvCapacity cap_;
  KvPool kv_;
  RopeTable rope_;
  std::optional<RopeTable> rope_sliding_;  // the sliding-window layers', for models that have them
  // Per-step scratch, reused across steps.
  struct AttentionItem {
    int64_t row;  // first flat row
    int32_t n;    // rows (1 for a token attended alone)
    int32_t kv_head;
    int32_t gathered;  // index into gathered_ for a chunk of a long run; -1 for a token alone
  };
  struct Gather {
    int64_t row;  // the run's first flat row
    int32_t kv_head;
  };
  std::vector<AttentionItem> items_;
  std::vector<Gather> gathers_;
  // Kept across layers and steps, so that attention neither allocates nor
  // zero-fills its buffers in the loop: the gathered K/V, and each thread's scratch.
  std::vector<GatheredKv> gathered_;
  struct AttentionScratch {
    std::vector<float> scores;  // attend's
    AttendRowsScratch rows;
  };
  std::vector<AttentionScratch> scratch_;
  std::vector<int32_t> row_seq_, row_pos_;
  std::vector<TokenId> row_token_;
  std::vector<int64_t> logit_rows_;  // the flat rows that want logits, in Logits' order
  std::vector<float> x_, h_, q_, k_, v_, att_, gate_, up_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const Model> model, const BackendOptions& opt) {
  return std::make_unique<CpuBackend>(std::move(model), opt);
}

}  // namespace kvgate
