#include "engine/cpu/attention.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <type_traits>

#include "engine/cpu/attention_avx512.h"
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/exp_nonpositive.h"
#include "engine/cpu/tanh_exp.h"
#include "engine/cpu/gemm_panel.h"
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

// exp_shifted in 8 lanes, for CPUs without AVX-512.
float exp_shifted_avx2(float* s, int32_t n) {
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

// s[p] <- exp(s[p] - max s) for p < n (n >= 1), and returns their sum (at
// least 1, the max's own term): a softmax but for the division, which the
// callers fold into the weights or the output rows. Every term is the same
// bits in either build (exp_nonpositive.h); only the sum's order differs.
float exp_shifted(float* s, int32_t n) { return cpu_has_avx512() ? exp_shifted_avx512(s, n) : exp_shifted_avx2(s, n); }

// Gemma 2's soft-capping of attention scores, as llama.cpp computes it:
// times 1 / cap, tanh (tanh_exp.h), times cap.
void soft_cap(float* s, int32_t n, float cap) {
  const float inv = 1.0f / cap;
  const __m256 vinv = _mm256_set1_ps(inv), vcap = _mm256_set1_ps(cap);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(s + i, _mm256_mul_ps(cpu::tanh8(_mm256_mul_ps(_mm256_loadu_ps(s + i), vinv)), vcap));
  for (; i < n; ++i) s[i] = cpu::tanh1(s[i] * inv) * cap;
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

// [sum of a[0]'s lanes, ..., sum of a[7]'s lanes]: eight dot products'
// partial sums reduced together, about a tenth of the shuffles of eight
// separate horizontal sums.
__m256 reduce8(const __m256 (&a)[8]) {
  const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Decode attention for one token's group of query heads. Scores go eight
// positions at a time per head (one reduction for the eight); the output
// accumulates in registers across positions, 64 values of a head at a time,
// so each V row is read from cache once per head and `out` written once.
template <typename E>
void attend_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores) {
  const int32_t hd = shape.head_dim, G = shape.group, B = kv.block_size();
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  const float scale = shape.score_scale();
  // The positions this query sees, [first, n_ctx): from here on n_ctx
  // counts them and index 0 is `first`.
  const int32_t first = shape.first_seen(n_ctx - 1);
  n_ctx -= first;
  scores.resize(static_cast<size_t>(G) * n_ctx);
  const bool vector_rows = hd % 8 == 0;
  // Each position's K and V rows, found through the block table once for
  // every head of the group.
  thread_local std::vector<const E*> rows;
  rows.resize(2 * static_cast<size_t>(n_ctx));
  const E** krow = rows.data();
  const E** vrow = rows.data() + n_ctx;
  for (int32_t i = 0; i < n_ctx; ++i) {
    const int32_t pos = first + i;
    const BlockId b = table[pos / B];
    krow[i] = kv.k<E>(layer, b, pos % B) + off;
    vrow[i] = kv.v<E>(layer, b, pos % B) + off;
  }

  for (int32_t h = 0; h < G; ++h) {
    const float* qh = q + static_cast<int64_t>(h) * hd;
    float* s = scores.data() + static_cast<size_t>(h) * n_ctx;
    int32_t p = 0;
    if (vector_rows)
      for (; p + 8 <= n_ctx; p += 8) {
        const E* const* k = krow + p;
        __m256 acc[8];
        for (auto& a : acc) a = _mm256_setzero_ps();
        for (int32_t d = 0; d < hd; d += 8) {
          const __m256 qv = _mm256_loadu_ps(qh + d);
          for (int j = 0; j < 8; ++j) acc[j] = _mm256_fmadd_ps(qv, load8(k[j] + d), acc[j]);
        }
        _mm256_storeu_ps(s + p, _mm256_mul_ps(reduce8(acc), _mm256_set1_ps(scale)));
      }
    for (; p < n_ctx; ++p) s[p] = dot(qh, krow[p], hd) * scale;
    if (shape.softcap > 0) soft_cap(s, n_ctx, shape.softcap);
  }

  for (int32_t h = 0; h < G; ++h) {
    const float* w = scores.data() + static_cast<size_t>(h) * n_ctx;
    const float inv = 1.0f / exp_shifted(scores.data() + static_cast<size_t>(h) * n_ctx, n_ctx);
    float* o = out + static_cast<int64_t>(h) * hd;
    if (!vector_rows) {
      std::fill(o, o + hd, 0.0f);
      for (int32_t p = 0; p < n_ctx; ++p) add_scaled(w[p] * inv, vrow[p], o, hd);
      continue;
    }
    for (int32_t d0 = 0; d0 < hd; d0 += 64) {
      const int32_t nv = std::min<int32_t>(64, hd - d0) / 8;  // vectors of this slice
      __m256 acc[8];
      for (auto& a : acc) a = _mm256_setzero_ps();
      auto accumulate = [&](auto vectors) {  // a constant count keeps acc in registers
        for (int32_t p = 0; p < n_ctx; ++p) {
          const E* v = vrow[p] + d0;
          const __m256 wp = _mm256_set1_ps(w[p]);
          for (int32_t u = 0; u < vectors; ++u) acc[u] = _mm256_fmadd_ps(wp, load8(v + 8 * u), acc[u]);
        }
      };
      if (nv == 8)
        accumulate(std::integral_constant<int32_t, 8>{});
      else
        accumulate(nv);
      for (int32_t u = 0; u < nv; ++u) _mm256_storeu_ps(o + d0 + 8 * u, _mm256_mul_ps(acc[u], _mm256_set1_ps(inv)));
    }
  }
}

// attend_rows runs on the panel kernel where the CPU has AVX-512 and V's
// rows are whole vectors (its panels read V in place, 16 lanes at a time).
bool on_panels(int32_t head_dim) { return head_dim % 16 == 0 && cpu_has_avx512(); }

template <typename E>
void gather_as(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               int32_t hd, GatheredKv& out) {
  const int32_t B = kv.block_size();
  const int64_t off = static_cast<int64_t>(kv_head) * hd;
  out.n_ctx = n_ctx;
  out.v.resize(static_cast<size_t>(n_ctx) * hd);
  for (int32_t p = 0; p < n_ctx; ++p)
    cpu::widen_row(kv.v<E>(layer, table[p / B], p % B) + off, &out.v[static_cast<size_t>(p) * hd], hd);
  if (!on_panels(hd)) {
    out.kt_ld = 0;
    out.k.resize(out.v.size());
    for (int32_t p = 0; p < n_ctx; ++p)
      cpu::widen_row(kv.k<E>(layer, table[p / B], p % B) + off, &out.k[static_cast<size_t>(p) * hd], hd);
    return;
  }
  // Transposed 16 positions at a time (the block's slots, widened first
  // unless already f32), in registers; the panel kernel reads whole panels,
  // so the columns past n_ctx are zeros.
  const int64_t ld = (n_ctx + kPanelTokens - 1) / kPanelTokens * kPanelTokens;
  out.kt_ld = ld;
  out.k.resize(static_cast<size_t>(hd * ld));
  thread_local std::vector<float> wide;
  wide.resize(static_cast<size_t>(16 * hd));
  float* kt = out.k.data();
  int32_t p0 = 0;
  for (; p0 < n_ctx; p0 += 16) {
    const int32_t n = std::min(16, n_ctx - p0);
    const float* rows[16];
    for (int32_t i = 0; i < n; ++i) {
      const E* k = kv.k<E>(layer, table[(p0 + i) / B], (p0 + i) % B) + off;
      if constexpr (std::is_same_v<E, float>) {
        rows[i] = k;
      } else {
        cpu::widen_row(k, &wide[static_cast<size_t>(i) * hd], hd);
        rows[i] = &wide[static_cast<size_t>(i) * hd];
      }
    }
    transpose_rows_avx512(rows, n, hd, kt + p0, ld);
  }
  for (int32_t d = 0; d < hd; ++d) std::fill(kt + d * ld + p0, kt + (d + 1) * ld, 0.0f);
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

float AttentionShape::score_scale() const {
  return scale > 0 ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int32_t attend_rows_min(int32_t head_dim) { return on_panels(head_dim) ? 4 : 12; }

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
  // The group's heads of every token as one matrix, so each product reads K
  // (or V) once for all of them; the scale folded in here, on head_dim
  // values per row rather than n_ctx scores.
  const float scale = shape.score_scale();
  for (int32_t i = 0; i < n; ++i)
    for (int32_t j = 0; j < G * hd; ++j) scratch.q[static_cast<size_t>(i) * G * hd + j] = q[i * row_stride + j] * scale;
  float* S = scratch.scores.data();
  const bool panels = kv.kt_ld > 0;
  // Q (rows x hd) and the scores (rows x n_ctx) as the weight operand of
  // the panel kernel: f32 rows read in place.
  const auto as_matrix = [](const float* data, int64_t r, int64_t c) {
    return Matrix{TensorType::F32, r, c, static_cast<size_t>(c) * 4, reinterpret_cast<const std::byte*>(data)};
  };
  if (panels)
    gemm_panels_avx512(as_matrix(scratch.q.data(), rows, hd), 0, rows, {kv.k.data(), kPanelTokens, kv.kt_ld, n_ctx}, S,
                       n_ctx, PanelOutput::kByRow);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n_ctx, hd, 1.0f, scratch.q.data(), hd, kv.k.data(), hd,
                0.0f, S, n_ctx);
  // Causal: token i (position start_pos + i) sees positions first..start_pos
  // + i, where first is 0 unless the layer slides.
  for (int32_t r = 0; r < rows; ++r) {
    float* s = S + static_cast<int64_t>(r) * n_ctx;
    const int32_t seen = start_pos + r / G + 1, first = shape.first_seen(seen - 1);
    if (shape.softcap > 0) soft_cap(s + first, seen - first, shape.softcap);
    scratch.sums[static_cast<size_t>(r)] = exp_shifted(s + first, seen - first);
    std::fill(s, s + first, 0.0f);
    std::fill(s + seen, s + n_ctx, 0.0f);
  }
  if (panels)
    gemm_panels_avx512(as_matrix(S, rows, n_ctx), 0, rows, {kv.v.data(), kPanelTokens, hd, hd}, scratch.out.data(), hd,
                       PanelOutput::kByRow);
  else
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
