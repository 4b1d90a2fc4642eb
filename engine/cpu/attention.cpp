#include "engine/cpu/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "engine/cpu/dot.h"

namespace kvgate {

void attend(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
            const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  const int32_t hd = shape.head_dim, G = shape.group, B = kv.block_size();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  scores.resize(static_cast<size_t>(G) * n_ctx);

  // Scores: each key row is read once for all query heads of the group.
  for (int32_t p = 0; p < n_ctx; ++p) {
    const float* k = kv.k(layer, table[p / B], p % B) + static_cast<int64_t>(kv_head) * hd;
    for (int32_t h = 0; h < G; ++h) scores[static_cast<size_t>(h) * n_ctx + p] = dot_f32(q + h * hd, k, hd) * scale;
  }
  for (int32_t h = 0; h < G; ++h) {
    float* s = scores.data() + static_cast<size_t>(h) * n_ctx;
    const float mx = *std::max_element(s, s + n_ctx);
    float sum = 0.0f;
    for (int32_t p = 0; p < n_ctx; ++p) sum += (s[p] = std::exp(s[p] - mx));
    const float inv = 1.0f / sum;
    for (int32_t p = 0; p < n_ctx; ++p) s[p] *= inv;
  }
  std::fill(out, out + static_cast<int64_t>(G) * hd, 0.0f);
  for (int32_t p = 0; p < n_ctx; ++p) {
    const float* v = kv.v(layer, table[p / B], p % B) + static_cast<int64_t>(kv_head) * hd;
    for (int32_t h = 0; h < G; ++h) {
      const float w = scores[static_cast<size_t>(h) * n_ctx + p];
      float* o = out + static_cast<int64_t>(h) * hd;
      for (int32_t i = 0; i < hd; ++i) o[i] += w * v[i];
    }
  }
}

void attend_rows(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t start_pos, int32_t n,
                 int32_t kv_head, const AttentionShape& shape, const float* q, float* out, int64_t row_stride,
                 AttendRowsScratch& scratch) {
  const int32_t hd = shape.head_dim, B = kv.block_size();
  const int32_t n_ctx = start_pos + n;  // the last row sees every position
  scratch.k.resize(static_cast<size_t>(n_ctx) * hd);
  scratch.v.resize(scratch.k.size());
  scratch.scores.resize(static_cast<size_t>(n) * n_ctx);
  for (int32_t p = 0; p < n_ctx; ++p) {
    const int64_t off = static_cast<int64_t>(kv_head) * hd;
    std::copy_n(kv.k(layer, table[p / B], p % B) + off, hd, &scratch.k[static_cast<size_t>(p) * hd]);
    std::copy_n(kv.v(layer, table[p / B], p % B) + off, hd, &scratch.v[static_cast<size_t>(p) * hd]);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int ld = static_cast<int>(row_stride);
  for (int32_t h = 0; h < shape.group; ++h) {
    const float* qh = q + static_cast<int64_t>(h) * hd;
    float* oh = out + static_cast<int64_t>(h) * hd;
    float* S = scratch.scores.data();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n_ctx, hd, scale, qh, ld, scratch.k.data(), hd, 0.0f, S,
                n_ctx);
    // Causal softmax: row i (position start_pos + i) sees positions 0..start_pos + i.
    for (int32_t i = 0; i < n; ++i) {
      float* s = S + static_cast<int64_t>(i) * n_ctx;
      const int32_t seen = start_pos + i + 1;
      const float mx = *std::max_element(s, s + seen);
      float sum = 0.0f;
      for (int32_t p = 0; p < seen; ++p) sum += (s[p] = std::exp(s[p] - mx));
      const float inv = 1.0f / sum;
      for (int32_t p = 0; p < seen; ++p) s[p] *= inv;
      std::fill(s + seen, s + n_ctx, 0.0f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hd, n_ctx, 1.0f, S, n_ctx, scratch.v.data(), hd, 0.0f,
                oh, ld);
  }
}

}  // namespace kvgate
