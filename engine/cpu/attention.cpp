#include "engine/cpu/attention.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "engine/cpu/kv_element.h"

namespace kvgate {
namespace {

using cpu::load1;
using cpu::load8;

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// q . k over n values, the key widened from its stored type.
template <typename E>
float dot(const float* q, const E* k, int32_t n) {
  __m256 acc = _mm256_setzero_ps();
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(k + i), acc);
  float s = hsum(acc);
  for (; i < n; ++i) s += q[i] * load1(k + i);
  return s;
}

// o += w v over n values, the value widened from its stored type.
template <typename E>
void add_scaled(float w, const E* v, float* o, int32_t n) {
  const __m256 vw = _mm256_set1_ps(w);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, _mm256_fmadd_ps(vw, load8(v + i), _mm256_loadu_ps(o + i)));
  for (; i < n; ++i) o[i] += w * load1(v + i);
}

// s[0, n) <- softmax(s[0, n)), n >= 1.
void softmax(float* s, int32_t n) {
  const float mx = *std::max_element(s, s + n);
  float sum = 0.0f;
  for (int32_t p = 0; p < n; ++p) sum += (s[p] = std::exp(s[p] - mx));
  const float inv = 1.0f / sum;
  for (int32_t p = 0; p < n; ++p) s[p] *= inv;
}

template <typename E>
void attend_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  const int32_t hd = shape.head_dim, G = shape.group, B = kv.block_size();
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  scores.resize(static_cast<size_t>(G) * n_ctx);

  // Scores: each key row is read once for all query heads of the group.
  for (int32_t p = 0; p < n_ctx; ++p) {
    const E* k = kv.k<E>(layer, table[p / B], p % B) + off;
    for (int32_t h = 0; h < G; ++h) scores[static_cast<size_t>(h) * n_ctx + p] = dot(q + h * hd, k, hd) * scale;
  }
  for (int32_t h = 0; h < G; ++h) softmax(scores.data() + static_cast<size_t>(h) * n_ctx, n_ctx);
  std::fill(out, out + static_cast<int64_t>(G) * hd, 0.0f);
  for (int32_t p = 0; p < n_ctx; ++p) {
    const E* v = kv.v<E>(layer, table[p / B], p % B) + off;
    for (int32_t h = 0; h < G; ++h)
      add_scaled(scores[static_cast<size_t>(h) * n_ctx + p], v, out + static_cast<int64_t>(h) * hd, hd);
  }
}

template <typename E>
void attend_rows_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t start_pos, int32_t n,
                    int32_t kv_head, const AttentionShape& shape, const float* q, float* out, int64_t row_stride,
                    AttendRowsScratch& scratch) {
  const int32_t hd = shape.head_dim, B = kv.block_size();
  const int32_t n_ctx = start_pos + n;  // the last row sees every position
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  scratch.k.resize(static_cast<size_t>(n_ctx) * hd);
  scratch.v.resize(scratch.k.size());
  scratch.scores.resize(static_cast<size_t>(n) * n_ctx);
  // Gathered out of the blocks and widened to f32, so sgemm reads one
  // contiguous matrix per operand.
  for (int32_t p = 0; p < n_ctx; ++p) {
    cpu::widen_row(kv.k<E>(layer, table[p / B], p % B) + off, &scratch.k[static_cast<size_t>(p) * hd], hd);
    cpu::widen_row(kv.v<E>(layer, table[p / B], p % B) + off, &scratch.v[static_cast<size_t>(p) * hd], hd);
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
      softmax(s, seen);
      std::fill(s + seen, s + n_ctx, 0.0f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hd, n_ctx, 1.0f, S, n_ctx, scratch.v.data(), hd, 0.0f,
                oh, ld);
  }
}

}  // namespace

void attend(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
            const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  cpu::with_kv_element(kv.type(), [&]<typename E>(E) {
    attend_as<E>(kv, layer, table, n_ctx, kv_head, shape, q, out, scores);
  });
}

void attend_rows(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t start_pos, int32_t n,
                 int32_t kv_head, const AttentionShape& shape, const float* q, float* out, int64_t row_stride,
                 AttendRowsScratch& scratch) {
  cpu::with_kv_element(kv.type(), [&]<typename E>(E) {
    attend_rows_as<E>(kv, layer, table, start_pos, n, kv_head, shape, q, out, row_stride, scratch);
  });
}

}  // namespace kvgate
