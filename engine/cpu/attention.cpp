#include "engine/cpu/attention.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "engine/cpu/exp_nonpositive.h"
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

float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// s[p] <- exp(s[p] - max s) for p < n (n >= 1), and returns their sum (at
// least 1, the max's own term): a softmax but for the division, which the
// callers fold into the weights or the output rows.
float exp_shifted(float* s, int32_t n) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int32_t p = 0;
  for (; p + 8 <= n; p += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + p));
  float mx = hmax(m);
  for (; p < n; ++p) mx = std::max(mx, s[p]);
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 acc = _mm256_setzero_ps();
  for (p = 0; p + 8 <= n; p += 8) {
    const __m256 e = cpu::exp_nonpositive8(_mm256_sub_ps(_mm256_loadu_ps(s + p), vmx));
    _mm256_storeu_ps(s + p, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = hsum(acc);
  for (; p < n; ++p) sum += (s[p] = cpu::exp_nonpositive1(s[p] - mx));
  return sum;
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

template <typename E>
void attend_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  const int32_t hd = shape.head_dim, G = shape.group, B = kv.block_size();
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  scores.resize(static_cast<size_t>(G) * n_ctx + G);  // then each head's 1 / sum

  // Scores: each key row is read once for all query heads of the group.
  for (int32_t p = 0; p < n_ctx; ++p) {
    const E* k = kv.k<E>(layer, table[p / B], p % B) + off;
    for (int32_t h = 0; h < G; ++h) scores[static_cast<size_t>(h) * n_ctx + p] = dot(q + h * hd, k, hd) * scale;
  }
  float* inv = scores.data() + static_cast<size_t>(G) * n_ctx;
  for (int32_t h = 0; h < G; ++h) inv[h] = 1.0f / exp_shifted(scores.data() + static_cast<size_t>(h) * n_ctx, n_ctx);
  std::fill(out, out + static_cast<int64_t>(G) * hd, 0.0f);
  for (int32_t p = 0; p < n_ctx; ++p) {
    const E* v = kv.v<E>(layer, table[p / B], p % B) + off;
    for (int32_t h = 0; h < G; ++h)
      add_scaled(scores[static_cast<size_t>(h) * n_ctx + p] * inv[h], v, out + static_cast<int64_t>(h) * hd, hd);
  }
}

template <typename E>
void gather_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               int32_t hd, GatheredKv& out) {
  const int32_t B = kv.block_size();
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  out.n_ctx = n_ctx;
  out.k.resize(static_cast<size_t>(n_ctx) * hd);
  out.v.resize(out.k.size());
  for (int32_t p = 0; p < n_ctx; ++p) {
    cpu::widen_row(kv.k<E>(layer, table[p / B], p % B) + off, &out.k[static_cast<size_t>(p) * hd], hd);
    cpu::widen_row(kv.v<E>(layer, table[p / B], p % B) + off, &out.v[static_cast<size_t>(p) * hd], hd);
  }
}

}  // namespace

void attend(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
            const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  cpu::with_kv_element(kv.type(), [&]<typename E>(E) {
    attend_as<E>(kv, layer, table, n_ctx, kv_head, shape, q, out, scores);
  });
}

void gather_kv(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               int32_t head_dim, GatheredKv& out) {
  cpu::with_kv_element(kv.type(),
                       [&]<typename E>(E) { gather_as<E>(kv, layer, table, n_ctx, kv_head, head_dim, out); });
}

void attend_rows(const GatheredKv& kv, int32_t start_pos, int32_t n, const AttentionShape& shape, const float* q,
                 float* out, int64_t row_stride, AttendRowsScratch& scratch) {
  const int32_t hd = shape.head_dim, G = shape.group;
  const int32_t n_ctx = start_pos + n;  // the last row sees every position
  assert(n_ctx <= kv.n_ctx);
  const int32_t rows = n * G;           // row i * G + h: token i's head h
  scratch.q.resize(static_cast<size_t>(rows) * hd);
  scratch.scores.resize(static_cast<size_t>(rows) * n_ctx);
  scratch.out.resize(scratch.q.size());
  scratch.sums.resize(static_cast<size_t>(rows));
  // The group's heads of every token as one matrix, so each product packs
  // K (or V) once for all of them.
  for (int32_t i = 0; i < n; ++i)
    std::copy_n(q + i * row_stride, G * hd, &scratch.q[static_cast<size_t>(i) * G * hd]);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* S = scratch.scores.data();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n_ctx, hd, scale, scratch.q.data(), hd, kv.k.data(), hd,
              0.0f, S, n_ctx);
  // Causal: token i (position start_pos + i) sees positions 0..start_pos + i.
  for (int32_t r = 0; r < rows; ++r) {
    float* s = S + static_cast<int64_t>(r) * n_ctx;
    const int32_t seen = start_pos + r / G + 1;
    scratch.sums[static_cast<size_t>(r)] = exp_shifted(s, seen);
    std::fill(s + seen, s + n_ctx, 0.0f);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hd, n_ctx, 1.0f, S, n_ctx, kv.v.data(), hd, 0.0f,
              scratch.out.data(), hd);
  // The softmax's division, on the output rows (head_dim values each rather than n_ctx).
  for (int32_t r = 0; r < rows; ++r) {
    const float inv = 1.0f / scratch.sums[static_cast<size_t>(r)];
    const float* o = &scratch.out[static_cast<size_t>(r) * hd];
    float* dst = out + (r / G) * row_stride + (r % G) * hd;
    for (int32_t d = 0; d < hd; ++d) dst[d] = o[d] * inv;
  }
}

}  // namespace kvgate
