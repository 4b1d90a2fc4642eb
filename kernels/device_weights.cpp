#include "kernels/device_weights.h"

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kernels/convert.h"
#include "kernels/fused_layout.h"

namespace kvgate::cuda {
namespace {

// The parts stacked row-wise into one device matrix, as plan_fused_layout
// lays them out.
DeviceMatrix fuse(std::initializer_list<const MatrixView*> parts, const char* what, cudaStream_t stream) {
  const FusedLayout l = plan_fused_layout(std::span(parts.begin(), parts.size()), what);
  DeviceMatrix m;
  m.type = l.type, m.rows = l.rows, m.cols = l.cols, m.row_bytes = l.row_bytes;
  m.storage = DeviceBuffer(l.bytes, what);
  m.data = m.storage.as();
  auto* base = m.storage.as<std::byte>();
  for (size_t i = 0; i < parts.size(); ++i) {
    const MatrixView* p = parts.begin()[i];
    const FusedLayout::Placed& to = l.parts[i];
    std::byte* dst = base + to.offset;
    if (p->type == to.type && p->row_bytes == to.row_bytes) {
      check(cudaMemcpyAsync(dst, p->data, p->bytes(), cudaMemcpyHostToDevice, stream), what);
    } else if (p->type == to.type) {
      // Dense on the device whatever the host's row stride.
      check(cudaMemcpy2DAsync(dst, to.row_bytes, p->data, p->row_bytes, to.row_bytes, static_cast<size_t>(p->rows),
                              cudaMemcpyHostToDevice, stream),
            what);
    } else {
      DeviceBuffer raw(p->bytes(), what);
      check(cudaMemcpyAsync(raw.as(), p->data, p->bytes(), cudaMemcpyHostToDevice, stream), what);
      widen_rows(p->type, raw.as(), p->row_bytes, p->rows, p->cols, reinterpret_cast<float*>(dst), stream);
      check(cudaStreamSynchronize(stream), what);  // before `raw` is freed
    }
  }
  for (const FusedLayout::Placed& r : l.runs) m.parts.push_back({r.type, r.rows, r.row_bytes, base + r.offset});
  return m;
}

DeviceBuffer upload_vector(const float* v, int64_t n, const char* what, cudaStream_t stream) {
  DeviceBuffer b(static_cast<size_t>(n) * sizeof(float), what);
  check(cudaMemcpyAsync(b.as(), v, b.bytes(), cudaMemcpyHostToDevice, stream), what);
  return b;
}

// An optional vector: an empty buffer when the model has none.
DeviceBuffer upload_optional(const float* v, int64_t n, const char* what, cudaStream_t stream) {
  return v ? upload_vector(v, n, what, stream) : DeviceBuffer();
}

// Q, K and V's biases as one vector matching the fused projection's row, so
// one pass adds them (qkv_finish.h). A file may give some and not others
// (llama's are each optional): the missing ones are zeros, and x + 0 is x.
DeviceBuffer upload_qkv_bias(const ModelConfig& c, const LayerWeightsView& lw, cudaStream_t stream) {
  if (!lw.bq && !lw.bk && !lw.bv) return {};
  const auto qd = static_cast<size_t>(c.q_dim()), kvd = static_cast<size_t>(c.kv_dim());
  std::vector<float> b(qd + 2 * kvd, 0.0f);
  if (lw.bq) std::copy_n(lw.bq, qd, b.begin());
  if (lw.bk) std::copy_n(lw.bk, kvd, b.begin() + static_cast<std::ptrdiff_t>(qd));
  if (lw.bv) std::copy_n(lw.bv, kvd, b.begin() + static_cast<std::ptrdiff_t>(qd + kvd));
  DeviceBuffer d(b.size() * sizeof(float), "attn_qkv bias");
  check(cudaMemcpyAsync(d.as(), b.data(), d.bytes(), cudaMemcpyHostToDevice, stream), "attn_qkv bias");
  check(cudaStreamSynchronize(stream), "attn_qkv bias");  // before `b`, this function's, is freed
  return d;
}

}  // namespace

DeviceWeights DeviceWeights::upload(const ModelConfig& c, const WeightsView& w, cudaStream_t stream) {
  if (static_cast<int32_t>(w.layers.size()) != c.n_layers) throw Error("weights: layer count differs from the config");
  DeviceWeights d;
  for (const LayerWeightsView& lw : w.layers) {
    DeviceLayer l;
    l.attn_norm = upload_vector(lw.attn_norm, c.dim, "attn_norm", stream);
    l.ffn_norm = upload_vector(lw.ffn_norm, c.dim, "ffn_norm", stream);
    l.qkv = fuse({&lw.wq, &lw.wk, &lw.wv}, "attn_qkv", stream);
    l.wo = fuse({&lw.wo}, "attn_output", stream);
    l.gate_up = fuse({&lw.w_gate, &lw.w_up}, "ffn_gate_up", stream);
    l.down = fuse({&lw.w_down}, "ffn_down", stream);
    l.qkv_bias = upload_qkv_bias(c, lw, stream);
    l.q_norm = upload_optional(lw.q_norm, c.head_dim, "attn_q_norm", stream);
    l.k_norm = upload_optional(lw.k_norm, c.head_dim, "attn_k_norm", stream);
    if (!lw.q_norm != !lw.k_norm) throw Error("weights: a layer has one of attn_q_norm and attn_k_norm");
    l.attn_post_norm = upload_optional(lw.attn_post_norm, c.dim, "post_attention_norm", stream);
    l.ffn_post_norm = upload_optional(lw.ffn_post_norm, c.dim, "post_ffw_norm", stream);
    d.bytes += l.attn_norm.bytes() + l.ffn_norm.bytes() + l.qkv.storage.bytes() + l.wo.storage.bytes() +
               l.gate_up.storage.bytes() + l.down.storage.bytes() + l.qkv_bias.bytes() + l.q_norm.bytes() +
               l.k_norm.bytes() + l.attn_post_norm.bytes() + l.ffn_post_norm.bytes();
    d.layers.push_back(std::move(l));
  }
  d.output_norm = upload_vector(w.output_norm, c.dim, "output_norm", stream);
  d.output = fuse({&w.output}, "output", stream);
  d.embd_type = w.token_embd.type;
  d.embd_row_bytes = w.token_embd.row_bytes;
  if (w.token_embd.data == w.output.data && d.output.type == w.token_embd.type) {
    d.embd = d.output.data;  // tied, and kept in the stored type: the same bytes serve both
    d.embd_row_bytes = d.output.row_bytes;
  } else {
    d.embd_storage = DeviceBuffer(w.token_embd.bytes(), "token_embd");
    check(cudaMemcpyAsync(d.embd_storage.as(), w.token_embd.data, w.token_embd.bytes(), cudaMemcpyHostToDevice,
                          stream),
          "token_embd");
    d.embd = d.embd_storage.as();
  }
  d.bytes += d.output_norm.bytes() + d.output.storage.bytes() + d.embd_storage.bytes();
  // The host view may be unmapped once this returns: finish every copy from it.
  check(cudaStreamSynchronize(stream), "weights upload");
  return d;
}

std::vector<const DeviceMatrix*> DeviceWeights::matrices() const {
  std::vector<const DeviceMatrix*> m;
  for (const DeviceLayer& l : layers) m.insert(m.end(), {&l.qkv, &l.wo, &l.gate_up, &l.down});
  m.push_back(&output);
  return m;
}

}  // namespace kvgate::cuda
