#include "engine/sampling/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "engine/cpu/vec_math.h"
#include "base/error.h"

namespace kvgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr size_t kBlock = 512;         // tokens per block sum (a multiple of 8)

using cpu::exp_nonpositive;
using cpu::max_logit;
constexpr size_t kHeapTopK = 1024;     // up to this k, a heap scan beats nth_element
constexpr size_t kSortBelow = 64;      // ranges this small are just sorted

// The one strict order on candidates: higher weight first, then lower id.
// Strict and total, so every selection below is exactly a sorted prefix.
constexpr auto better = [](const auto& a, const auto& b) {
  return a.weight > b.weight || (a.weight == b.weight && a.id < b.id);
};

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

TokenId Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampler: empty logits");
  const auto k = static_cast<size_t>(params_.top_k);
  if (params_.temperature > 0 && k > 0 && k < logits.size()) return sample_top_k(logits, k);

  const float max = max_logit(logits);
  if (!(max > -kInf)) throw Error("sampler: every logit is -inf or NaN");
  // Greedy, and +inf ("certain", where softmax would be inf/inf): the first
  // (lowest id) of the maxima.
  if (params_.temperature == 0 || max == kInf)
    return static_cast<TokenId>(std::find(logits.begin(), logits.end(), max) - logits.begin());
  return sample_all(logits, max);
}

TokenId Sampler::sample_all(std::span<const float> logits, float max) {
  const double total = cpu::softmax_weights(logits, max, params_.temperature, kBlock, weights_, block_sums_);
  if (params_.top_p < 1) {
    // A token whose weight is under (1 - p) * total / n cannot be in the
    // nucleus: all such tokens together weigh under (1 - p) * total, and
    // they are the lightest, so they lie in the tail the nucleus leaves out.
    // For a real model's peaked row this leaves a few hundred candidates.
    const double p = params_.top_p;
    const double floor = (1 - p) * total / static_cast<double>(logits.size()) * (1 - 1e-6);
    cand_.clear();
    for (size_t i = 0; i < weights_.size(); ++i)
      if (weights_[i] > 0 && weights_[i] >= floor) cand_.push_back({weights_[i], static_cast<TokenId>(i)});
    return draw(keep_top_p(cand_.size(), p * total));
  }

  // Find the block the uniform lands in from the block sums, then the token.
  const double r = uniform01() * total;
  double acc = 0;
  for (size_t b = 0; b < block_sums_.size(); ++b) {
    if (acc + block_sums_[b] > r) {
      const size_t begin = b * kBlock, end = std::min(weights_.size(), begin + kBlock);
      for (size_t i = begin; i < end; ++i) {
        acc += weights_[i];
        if (r < acc) return static_cast<TokenId>(i);
      }
      // The block's float sum rounded above the token walk: its last token with weight.
      for (size_t i = end; i-- > begin;)
        if (weights_[i] > 0) return static_cast<TokenId>(i);
    }
    acc += block_sums_[b];
  }
  for (size_t i = weights_.size(); i-- > 0;)  // r rounded up to the total
    if (weights_[i] > 0) return static_cast<TokenId>(i);
  return static_cast<TokenId>(std::find(logits.begin(), logits.end(), max) - logits.begin());
}

TokenId Sampler::sample_top_k(std::span<const float> logits, size_t k) {
  select_top_k(logits, k);
  if (cand_.empty()) throw Error("sampler: every logit is -inf or NaN");
  float max = -kInf;
  for (const Candidate& c : cand_) max = std::max(max, c.weight);
  if (max == kInf) {
    TokenId id = std::numeric_limits<TokenId>::max();
    for (const Candidate& c : cand_)
      if (c.weight == kInf) id = std::min(id, c.id);
    return id;
  }
  double total = 0;
  for (Candidate& c : cand_) {
    c.weight = exp_nonpositive((c.weight - max) / params_.temperature);
    total += c.weight;
  }
  size_t n = cand_.size();
  if (params_.top_p < 1) n = keep_top_p(n, static_cast<double>(params_.top_p) * total);
  return draw(n);
}

void Sampler::select_top_k(std::span<const float> logits, size_t k) {
  cand_.clear();
  if (k <= kHeapTopK) {
    // A heap of the k best so far, the worst of them at the front; ids only
    // grow, so a later equal logit never displaces an earlier one. Most
    // logits lose to the front, so eight at a time are skipped with one compare.
    auto offer = [&](size_t i) {
      const float x = logits[i];
      if (!(x > -kInf)) return;
      if (cand_.size() < k) {
        cand_.push_back({x, static_cast<TokenId>(i)});
        std::push_heap(cand_.begin(), cand_.end(), better);
      } else if (x > cand_.front().weight) {
        std::pop_heap(cand_.begin(), cand_.end(), better);
        cand_.back() = {x, static_cast<TokenId>(i)};
        std::push_heap(cand_.begin(), cand_.end(), better);
      }
    };
    const size_t n = logits.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const float bar = cand_.size() < k ? -kInf : cand_.front().weight;
      if (!cpu::any_greater8(logits.data() + i, bar)) continue;
      for (size_t j = i; j < i + 8; ++j) offer(j);
    }
    for (; i < n; ++i) offer(i);
    return;
  }
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] > -kInf) cand_.push_back({logits[i], static_cast<TokenId>(i)});
  if (cand_.size() > k) {
    std::nth_element(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(k), cand_.end(), better);
    cand_.resize(k);
  }
}

size_t Sampler::keep_top_p(size_t n, double need) {
  // Moves the smallest best-first prefix of cand_[0, n) whose weight reaches
  // `need` to the front and returns its length (>= 1). Quickselect on mass:
  // partition the open range around a pivot; if the better side holds the
  // mass still needed the cut is in it, else keep it and the pivot and look
  // in the worse side. O(n) expected, so even a flat 128k row is no sort.
  auto at = [&](size_t i) { return cand_.begin() + static_cast<std::ptrdiff_t>(i); };
  auto mass = [&](size_t from, size_t to) {
    double s[4] = {0, 0, 0, 0};  // four chains, so the adds do not wait on each other
    size_t i = from;
    for (; i + 4 <= to; i += 4)
      for (size_t j = 0; j < 4; ++j) s[j] += cand_[i + j].weight;
    for (; i < to; ++i) s[0] += cand_[i].weight;
    return (s[0] + s[1]) + (s[2] + s[3]);
  };
  size_t lo = 0, hi = n;  // [0, lo) kept; the cut is in [lo, hi)
  for (int round = 0; hi - lo > kSortBelow && round < 64; ++round) {
    // Median of three as the pivot, parked at hi - 1 while partitioning.
    size_t a = lo, b = lo + (hi - lo) / 2, c = hi - 1;
    if (better(cand_[b], cand_[a])) std::swap(a, b);
    if (better(cand_[c], cand_[b])) std::swap(b, c);
    if (better(cand_[b], cand_[a])) std::swap(a, b);
    std::swap(cand_[b], cand_[hi - 1]);
    const Candidate pivot = cand_[hi - 1];
    const size_t s = static_cast<size_t>(
        std::partition(at(lo), at(hi - 1), [&](const Candidate& x) { return better(x, pivot); }) - cand_.begin());
    std::swap(cand_[s], cand_[hi - 1]);
    const double upper = mass(lo, s);
    if (upper >= need) {
      hi = s;
      continue;
    }
    need -= upper;
    if (pivot.weight >= need) return s + 1;
    need -= pivot.weight;
    lo = s + 1;
  }
  std::sort(at(lo), at(hi), better);
  double cum = 0;
  for (size_t i = lo; i < hi; ++i) {
    cum += cand_[i].weight;
    if (cum >= need) return i + 1;
  }
  return std::max<size_t>(hi, 1);  // summation order left `need` an ulp out of reach
}

TokenId Sampler::draw(size_t n) {
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += cand_[i].weight;
  const double r = uniform01() * total;
  double acc = 0;
  for (size_t i = 0; i < n; ++i) {
    acc += cand_[i].weight;
    if (r < acc) return cand_[i].id;
  }
  for (size_t i = n; i-- > 0;)  // r rounded up to the total
    if (cand_[i].weight > 0) return cand_[i].id;
  return cand_[0].id;
}

double Sampler::uniform01() {
  // The top 53 bits as a double in [0, 1): exact and the same on every platform.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

}  // namespace kvgate
