#include "kernels/sampling.h"

#include <cub/device/device_radix_sort.cuh>

#include <cfloat>
#include <cstring>

#include "kernels/cuda_error.h"

namespace kvgate::cuda {
namespace {

constexpr int32_t kBlock = 512;  // tokens per block sum, the CPU's kBlock
constexpr uint64_t kNoKey = ~uint64_t{0};

// The outcome, and what the kernels hand each other, in device memory.
struct SampleState {
  float max;
  int32_t argmax;   // first index of max
  double total;     // the softmax weights' sum, in the CPU's order
  int32_t token;
  int32_t used_uniform;
  int32_t error;    // every logit -inf or NaN
};

// The CPU's exp_nonpositive (engine/cpu/vec_math.cpp), bit for bit: the
// explicit _rn intrinsics keep nvcc from contracting a multiply and an add
// into one rounding where the CPU rounds twice.
__device__ float exp_nonpositive(float y) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kC[] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
  if (!(y >= -87.0f)) return 0.0f;
  const float n = rintf(__fmul_rn(y, kLog2e));
  float r = fmaf(-n, kLn2Hi, y);
  r = fmaf(-n, kLn2Lo, r);
  float p = kC[0];
#pragma unroll
  for (int i = 1; i < 7; ++i) p = fmaf(p, r, kC[i]);
  return __fmul_rn(p, __int_as_float((static_cast<int32_t>(n) + 127) << 23));
}

__device__ float softmax_weight(float x, float max, float t) { return exp_nonpositive(__fdiv_rn(__fsub_rn(x, max), t)); }

// Keys that sort ascending as the CPU's `better` order: weight (or logit)
// descending, then id ascending. -0 is 0, as the CPU's == sees it.
__device__ uint64_t best_first_key(float v, int32_t id) {
  if (v == 0.0f) v = 0.0f;
  const uint32_t b = __float_as_uint(v);
  const uint32_t ascending = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (static_cast<uint64_t>(~ascending) << 32) | static_cast<uint32_t>(id);
}
__device__ float key_value(uint64_t key) {
  const uint32_t ascending = ~static_cast<uint32_t>(key >> 32);
  return __uint_as_float((ascending & 0x80000000u) ? (ascending & 0x7fffffffu) : ~ascending);
}
__device__ int32_t key_id(uint64_t key) { return static_cast<int32_t>(key & 0xffffffffu); }

// One block: the largest logit skipping NaN (the CPU's max_logit) and its
// first index (the CPU's std::find).
__global__ void argmax_kernel(const float* x, int32_t n, SampleState* st) {
  __shared__ float sv[1024];
  __shared__ int32_t si[1024];
  float best = -INFINITY;
  int32_t at = n;
  for (int32_t i = threadIdx.x; i < n; i += blockDim.x)
    if (x[i] > best) best = x[i], at = i;  // NaN never compares greater
  sv[threadIdx.x] = best, si[threadIdx.x] = at;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      const float v = sv[threadIdx.x + s];
      const int32_t j = si[threadIdx.x + s];
      if (v > sv[threadIdx.x] || (v == sv[threadIdx.x] && j < si[threadIdx.x])) sv[threadIdx.x] = v, si[threadIdx.x] = j;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    st->max = sv[0], st->argmax = si[0], st->used_uniform = 0;
    st->error = !(sv[0] > -INFINITY);
    st->token = si[0];
  }
}

// One block per kBlock tokens: the weights, and the block's sum as the
// CPU's AVX2 loop forms it (eight float lanes over full groups of eight,
// the lanes added in double, then the tail in double).
__global__ void weights_kernel(const float* x, int32_t n, float t, const SampleState* st, float* w,
                               double* block_sums) {
  const int32_t begin = blockIdx.x * kBlock, end = min(n, begin + kBlock);
  const float max = st->max;
  for (int32_t i = begin + threadIdx.x; i < end; i += blockDim.x) w[i] = softmax_weight(x[i], max, t);
  __syncthreads();
  __shared__ float lanes[8];
  const int32_t full_end = begin + (end - begin) / 8 * 8;
  if (threadIdx.x < 8) {
    float acc = 0.0f;
    for (int32_t i = begin + threadIdx.x; i < full_end; i += 8) acc = __fadd_rn(acc, w[i]);
    lanes[threadIdx.x] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double sum = 0;
    for (int j = 0; j < 8; ++j) sum = __dadd_rn(sum, static_cast<double>(lanes[j]));
    for (int32_t i = full_end; i < end; ++i) sum = __dadd_rn(sum, static_cast<double>(w[i]));
    block_sums[blockIdx.x] = sum;
  }
}

__global__ void total_kernel(const double* block_sums, int32_t blocks, SampleState* st) {
  double total = 0;
  for (int32_t b = 0; b < blocks; ++b) total = __dadd_rn(total, block_sums[b]);
  st->total = total;
}

// The CPU's sample_all draw without top_p: block sums first, then tokens.
__global__ void draw_all_kernel(const float* w, const double* block_sums, int32_t n, double u, SampleState* st) {
  if (st->error || st->max == INFINITY) return;  // no draw: error, or the first +inf (argmax) is certain
  st->used_uniform = 1;
  const int32_t blocks = (n + kBlock - 1) / kBlock;
  const double r = __dmul_rn(u, st->total);
  double acc = 0;
  for (int32_t b = 0; b < blocks; ++b) {
    if (__dadd_rn(acc, block_sums[b]) > r) {
      const int32_t begin = b * kBlock, end = min(n, begin + kBlock);
      for (int32_t i = begin; i < end; ++i) {
        acc = __dadd_rn(acc, static_cast<double>(w[i]));
        if (r < acc) {
          st->token = i;
          return;
        }
      }
      for (int32_t i = end; i-- > begin;)
        if (w[i] > 0) {
          st->token = i;
          return;
        }
    }
    acc = __dadd_rn(acc, block_sums[b]);
  }
  for (int32_t i = n; i-- > 0;)
    if (w[i] > 0) {
      st->token = i;
      return;
    }
  // else st->token stays the argmax, as the CPU's last resort
}

// Nucleus candidates of the whole row: weight > 0 and at least the CPU's
// floor (1 - p) * total / n, just under, so no nucleus token is left out.
__global__ void nucleus_keys_kernel(const float* w, int32_t n, double p, const SampleState* st, uint64_t* keys) {
  const double floor = __dmul_rn(__ddiv_rn(__dmul_rn(1 - p, st->total), static_cast<double>(n)), 1 - 1e-6);
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    keys[i] = (w[i] > 0 && static_cast<double>(w[i]) >= floor) ? best_first_key(w[i], i) : kNoKey;
}

// Candidates for top-k: every logit above -inf, best first.
__global__ void logit_keys_kernel(const float* x, int32_t n, uint64_t* keys) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    keys[i] = x[i] > -INFINITY ? best_first_key(x[i], i) : kNoKey;
}

// Top-k, on the k best logits (sorted): the certain +inf, else the weights
// at the temperature, their total (for top_p's need) and the candidates
// re-keyed by weight for the best-first walk.
__global__ void top_k_weights_kernel(const uint64_t* sorted, int32_t k, float t, SampleState* st, uint64_t* keys,
                                     int32_t* n_out) {
  int32_t n = 0;
  while (n < k && sorted[n] != kNoKey) ++n;
  *n_out = n;
  st->used_uniform = 0;
  st->error = n == 0;
  if (n == 0) return;
  const float max = key_value(sorted[0]);
  st->max = max;
  st->token = key_id(sorted[0]);  // when max is +inf: the lowest id among the +inf ones
  if (max == INFINITY) return;
  double total = 0;
  for (int32_t j = 0; j < n; ++j) {
    const float wj = softmax_weight(key_value(sorted[j]), max, t);
    total = __dadd_rn(total, static_cast<double>(wj));
    keys[j] = best_first_key(wj, key_id(sorted[j]));
  }
  st->total = total;
  for (int32_t j = n; j < k; ++j) keys[j] = kNoKey;  // the re-sort takes k keys
}

// The CPU's keep_top_p (for the sorted case) then draw(): the smallest
// best-first prefix whose mass reaches p * total (all of them for p = 1),
// then one uniform over that prefix, walked best-first.
__global__ void draw_sorted_kernel(const uint64_t* sorted, const int32_t* n_in, int32_t n_all, double p, double u,
                                   SampleState* st) {
  if (st->error || st->max == INFINITY) return;
  int32_t n = 0;
  if (n_in)
    n = *n_in;
  else
    while (n < n_all && sorted[n] != kNoKey) ++n;  // the candidates sort before every kNoKey
  if (p < 1) {
    const double need = __dmul_rn(p, st->total);
    double cum = 0;
    int32_t keep = n;
    for (int32_t i = 0; i < n; ++i) {
      cum = __dadd_rn(cum, static_cast<double>(key_value(sorted[i])));
      if (cum >= need) {
        keep = i + 1;
        break;
      }
    }
    n = keep > 0 ? keep : 1;
  }
  st->used_uniform = 1;
  double total = 0;
  for (int32_t i = 0; i < n; ++i) total = __dadd_rn(total, static_cast<double>(key_value(sorted[i])));
  const double r = __dmul_rn(u, total);
  double acc = 0;
  for (int32_t i = 0; i < n; ++i) {
    acc = __dadd_rn(acc, static_cast<double>(key_value(sorted[i])));
    if (r < acc) {
      st->token = key_id(sorted[i]);
      return;
    }
  }
  for (int32_t i = n; i-- > 0;)
    if (key_value(sorted[i]) > 0) {
      st->token = key_id(sorted[i]);
      return;
    }
  st->token = key_id(sorted[0]);
}

// The CPU's uniform01: the top 53 bits as a double in [0, 1).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

DeviceSampler::DeviceSampler(int32_t vocab, cudaStream_t stream)
    : vocab_(vocab),
      stream_(stream),
      weights_(static_cast<size_t>(vocab) * sizeof(float), "sampler weights"),
      block_sums_(static_cast<size_t>((vocab + kBlock - 1) / kBlock) * sizeof(double), "sampler block sums"),
      keys_(static_cast<size_t>(vocab) * sizeof(uint64_t), "sampler keys"),
      sorted_(static_cast<size_t>(vocab) * sizeof(uint64_t), "sampler keys"),
      state_(sizeof(SampleState) + sizeof(int32_t), "sampler state"),
      state_host_(sizeof(SampleState), "sampler state (host)") {
  check(cub::DeviceRadixSort::SortKeys(nullptr, sort_temp_bytes_, keys_.as<uint64_t>(), sorted_.as<uint64_t>(),
                                       vocab_, 0, 64, stream_),
        "sampler sort size");
  sort_temp_ = DeviceBuffer(sort_temp_bytes_, "sampler sort");
}

int32_t DeviceSampler::sample(const float* logits, const SamplingChoice& c, std::mt19937_64& rng) {
  auto* st = state_.as<SampleState>();
  auto* n_kept = reinterpret_cast<int32_t*>(state_.as<std::byte>() + sizeof(SampleState));
  auto* keys = keys_.as<uint64_t>();
  auto* sorted = sorted_.as<uint64_t>();
  const int32_t blocks = (vocab_ + kBlock - 1) / kBlock;
  // The draw is taken from a copy; `rng` advances only if a draw was used.
  std::mt19937_64 next = rng;
  const double u = uniform01(next);
  auto sort = [&](int32_t n) {
    check(cub::DeviceRadixSort::SortKeys(sort_temp_.as(), sort_temp_bytes_, keys, sorted, n, 0, 64, stream_),
          "sampler sort");
  };

  const bool top_k = c.temperature > 0 && c.top_k > 0 && c.top_k < vocab_;
  if (top_k) {
    logit_keys_kernel<<<(vocab_ + 255) / 256, 256, 0, stream_>>>(logits, vocab_, keys);
    check_launch("sampler top-k keys");
    sort(vocab_);
    top_k_weights_kernel<<<1, 1, 0, stream_>>>(sorted, c.top_k, c.temperature, st, keys, n_kept);
    check_launch("sampler top-k weights");
    // The candidates again, by weight (ties by id), as the CPU's
    // keep_top_p sorts them: distinct logits can round to one weight.
    sort(c.top_k);
    draw_sorted_kernel<<<1, 1, 0, stream_>>>(sorted, n_kept, 0, c.top_p, u, st);
    check_launch("sampler top-k draw");
  } else {
    argmax_kernel<<<1, 1024, 0, stream_>>>(logits, vocab_, st);
    check_launch("sampler argmax");
    if (c.temperature > 0) {
      weights_kernel<<<blocks, kBlock, 0, stream_>>>(logits, vocab_, c.temperature, st, weights_.as<float>(),
                                                     block_sums_.as<double>());
      check_launch("sampler weights");
      total_kernel<<<1, 1, 0, stream_>>>(block_sums_.as<double>(), blocks, st);
      check_launch("sampler total");
      if (c.top_p < 1) {
        nucleus_keys_kernel<<<(vocab_ + 255) / 256, 256, 0, stream_>>>(weights_.as<float>(), vocab_, c.top_p, st,
                                                                        keys);
        check_launch("sampler nucleus keys");
        sort(vocab_);
        draw_sorted_kernel<<<1, 1, 0, stream_>>>(sorted, nullptr, vocab_, c.top_p, u, st);
        check_launch("sampler nucleus draw");
      } else {
        draw_all_kernel<<<1, 1, 0, stream_>>>(weights_.as<float>(), block_sums_.as<double>(), vocab_, u, st);
        check_launch("sampler draw");
      }
    }
  }
  check(cudaMemcpyAsync(state_host_.as(), st, sizeof(SampleState), cudaMemcpyDeviceToHost, stream_), "sampler result");
  check(cudaStreamSynchronize(stream_), "sampler");
  SampleState out;
  std::memcpy(&out, state_host_.as(), sizeof out);
  if (out.error) throw Error("sampler: every logit is -inf or NaN");
  if (out.used_uniform) rng = next;
  return out.token;
}

}  // namespace kvgate::cuda
