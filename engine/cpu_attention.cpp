#include "engine/cpu_attention.h"

#include <algorithm>
#include <cmath>

#include "engine/cpu_dot.h"

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

}  // namespace kvgate
