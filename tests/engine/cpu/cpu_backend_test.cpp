#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/attention.h"
#include "engine/error.h"
#include "engine/model/model.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

std::shared_ptr<const Model> stories() {
  static auto m = Model::load(shared_path("models/stories260K.gguf"));
  return m;
}

Tokens golden_ids() {
  std::ifstream f(shared_path("models/stories260K.greedy200.ids.txt"));
  Tokens ids;
  for (TokenId id; f >> id;) ids.push_back(id);
  return ids;
}

TokenId argmax(std::span<const float> v) {
  return static_cast<TokenId>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<BlockId> identity_table(int32_t n) {
  std::vector<BlockId> t(n);
  std::iota(t.begin(), t.end(), 0);
  return t;
}

// Runs tokens one per step and returns each step's logits.
std::vector<std::vector<float>> one_at_a_time(Backend& be, const Tokens& toks, std::span<const BlockId> table) {
  std::vector<std::vector<float>> rows;
  Logits out;
  for (size_t i = 0; i < toks.size(); ++i) {
    SequenceStep st{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), table, LogitsWanted::kLast};
    be.forward({&st, 1}, out);
    rows.emplace_back(out.row(0).begin(), out.row(0).end());
  }
  return rows;
}

TEST(CpuBackend, Stories260KGreedyMatchesPublishedIds) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(be->num_blocks());
  Tokens expected = golden_ids();
  ASSERT_EQ(expected.size(), 200u);
  Tokens seq{1};  // BOS
  Logits out;
  for (int step = 0; step < 200; ++step) {
    SequenceStep st{std::span(seq).subspan(seq.size() - 1, 1), static_cast<int32_t>(seq.size() - 1), table,
                    LogitsWanted::kLast};
    be->forward({&st, 1}, out);
    seq.push_back(argmax(out.row(0)));
  }
  EXPECT_EQ(Tokens(seq.begin() + 1, seq.end()), expected);
}

TEST(CpuBackend, PrefillThenDecodeEqualsOneTokenAtATime) {
  auto model = stories();
  Tokens toks = golden_ids();
  toks.insert(toks.begin(), 1);
  toks.resize(60);
  auto a = make_cpu_backend(model, {});
  auto b = make_cpu_backend(model, {});
  auto table = identity_table(a->num_blocks());
  auto ref = one_at_a_time(*a, toks, table);

  const size_t n_prefill = 45;  // crosses block boundaries at 16 and 32
  Logits out;
  SequenceStep pre{std::span(toks).first(n_prefill), 0, table, LogitsWanted::kAll};
  b->forward({&pre, 1}, out);
  for (size_t i = 0; i < n_prefill; ++i)
    for (int v = 0; v < out.vocab(); ++v) ASSERT_NEAR(out.row(0, static_cast<int32_t>(i))[v], ref[i][v], 1e-4) << i;
  for (size_t i = n_prefill; i < toks.size(); ++i) {
    SequenceStep st{std::span(toks).subspan(i, 1), static_cast<int32_t>(i), table, LogitsWanted::kLast};
    b->forward({&st, 1}, out);
    for (int v = 0; v < out.vocab(); ++v) ASSERT_NEAR(out.row(0)[v], ref[i][v], 1e-4) << i;
  }
}

TEST(CpuBackend, ScatteredBlockTableEqualsContiguousOne) {
  auto model = stories();
  Tokens toks = golden_ids();
  toks.resize(70);
  auto a = make_cpu_backend(model, {});
  auto b = make_cpu_backend(model, {});
  auto contiguous = identity_table(a->num_blocks());
  std::vector<BlockId> scattered = contiguous;
  std::mt19937 rng(7);
  std::shuffle(scattered.begin(), scattered.end(), rng);
  Logits la, lb;
  SequenceStep sa{toks, 0, contiguous, LogitsWanted::kAll};
  SequenceStep sb{toks, 0, scattered, LogitsWanted::kAll};
  a->forward({&sa, 1}, la);
  b->forward({&sb, 1}, lb);
  for (int32_t i = 0; i < la.rows(0); ++i)
    for (int v = 0; v < la.vocab(); ++v) ASSERT_EQ(la.row(0, i)[v], lb.row(0, i)[v]);
}

TEST(CpuAttention, PagedEqualsContiguousReference) {
  const int32_t layers = 2, B = 4, kv_heads = 2, hd = 8, G = 3, n_ctx = 23;
  KvPool pool(layers, 16, B, kv_heads * hd);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<BlockId> table{9, 2, 14, 0, 7, 11};
  // Contiguous copies of what goes into the paged pool.
  std::vector<float> K(n_ctx * kv_heads * hd), V(K.size());
  for (auto& x : K) x = nd(rng);
  for (auto& x : V) x = nd(rng);
  const int32_t layer = 1;
  for (int32_t p = 0; p < n_ctx; ++p) {
    std::copy_n(&K[p * kv_heads * hd], kv_heads * hd, pool.k(layer, table[p / B], p % B));
    std::copy_n(&V[p * kv_heads * hd], kv_heads * hd, pool.v(layer, table[p / B], p % B));
  }
  std::vector<float> q(G * hd);
  for (auto& x : q) x = nd(rng);
  for (int32_t g = 0; g < kv_heads; ++g) {
    std::vector<float> out(G * hd), scores;
    attend(pool, layer, table, n_ctx, g, {hd, G}, q.data(), out.data(), scores);
    for (int32_t h = 0; h < G; ++h) {
      // Straightforward softmax(q.k / sqrt(d)) v in double precision.
      std::vector<double> s(n_ctx);
      for (int32_t p = 0; p < n_ctx; ++p) {
        double dot = 0;
        for (int32_t i = 0; i < hd; ++i) dot += double{q[h * hd + i]} * K[(p * kv_heads + g) * hd + i];
        s[p] = dot / std::sqrt(double{hd});
      }
      double mx = *std::max_element(s.begin(), s.end()), sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - mx));
      for (int32_t i = 0; i < hd; ++i) {
        double o = 0;
        for (int32_t p = 0; p < n_ctx; ++p) o += s[p] / sum * V[(p * kv_heads + g) * hd + i];
        EXPECT_NEAR(out[h * hd + i], o, 1e-5);
      }
    }
  }
}

TEST(CpuBackend, BatchedDecodeEqualsEachAlone) {
  auto model = stories();
  Tokens base = golden_ids();
  const int n_seqs = 5;
  auto batched = make_cpu_backend(model, {});
  auto alone = make_cpu_backend(model, {});
  const int32_t per_seq = 8;  // blocks per sequence
  std::vector<std::vector<BlockId>> tables(n_seqs);
  std::vector<Tokens> prompts(n_seqs);
  Logits out;
  for (int s = 0; s < n_seqs; ++s) {
    for (int b = 0; b < per_seq; ++b) tables[s].push_back(s * per_seq + b);
    prompts[s] = Tokens(base.begin() + s * 7, base.begin() + s * 7 + 10 + 3 * s);  // different lengths
    SequenceStep st{prompts[s], 0, tables[s], LogitsWanted::kLast};
    batched->forward({&st, 1}, out);
    alone->forward({&st, 1}, out);
  }
  for (int step = 0; step < 12; ++step) {
    std::vector<SequenceStep> batch;
    std::vector<TokenId> next(n_seqs);
    for (int s = 0; s < n_seqs; ++s) {
      next[s] = base[(step * 13 + s * 5) % base.size()];
      batch.push_back({std::span(&next[s], 1), static_cast<int32_t>(prompts[s].size()), tables[s], LogitsWanted::kLast});
    }
    batched->forward(batch, out);
    for (int s = 0; s < n_seqs; ++s) {
      Logits one;
      alone->forward({&batch[s], 1}, one);
      for (int v = 0; v < one.vocab(); ++v) ASSERT_NEAR(out.row(s)[v], one.row(0)[v], 1e-4) << "seq " << s;
      prompts[s].push_back(next[s]);
    }
  }
}

TEST(CpuBackend, RejectsBadBatchesBeforeWriting) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(2);
  Tokens toks(40, 5);
  Logits out;
  SequenceStep too_short{toks, 0, table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&too_short, 1}, out), Error);
  Tokens bad{1, 99999};
  SequenceStep bad_token{bad, 0, table, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&bad_token, 1}, out), Error);
  auto full = identity_table(be->num_blocks());
  Tokens one{1};
  SequenceStep past_ctx{one, be->config().context_length, full, LogitsWanted::kLast};
  EXPECT_THROW(be->forward({&past_ctx, 1}, out), Error);
}

TEST(CpuBackend, BlockCopiesRoundTrip) {
  auto be = make_cpu_backend(stories(), {});
  auto table = identity_table(be->num_blocks());
  Tokens toks = golden_ids();
  toks.resize(16);
  Logits out;
  SequenceStep st{toks, 0, table, LogitsWanted::kLast};
  be->forward({&st, 1}, out);
  std::vector<std::byte> host(be->block_bytes());
  be->copy_block_to_host(0, host);
  be->copy_block_from_host(5, host);
  std::vector<std::byte> again(be->block_bytes());
  be->copy_block_to_host(5, again);
  EXPECT_EQ(host, again);
}

}  // namespace
}  // namespace kvgate
