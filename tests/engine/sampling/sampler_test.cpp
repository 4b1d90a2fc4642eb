#include "engine/sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"

namespace kvgate {
namespace {

// A 32k-vocabulary row with a smooth, deterministic spread of logits.
std::vector<float> big_row(size_t n = 32000) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 3.0f * std::sin(static_cast<float>(i) * 0.7f) + 0.001f * (i % 97);
  return v;
}

std::string error_of(const SamplingParams& p) {
  try {
    validate(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Sampler, GreedyPicksTheMaxAndTiesGoToTheLowestId) {
  Sampler s({.temperature = 0});
  EXPECT_EQ(s.sample(std::vector<float>{0.1f, 2.5f, -1.0f, 2.4f}), 1);
  EXPECT_EQ(s.sample(std::vector<float>{1.0f, 3.0f, 3.0f, 3.0f}), 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(s.sample(std::vector<float>{nan, -5.0f, nan}), 1);
  auto row = big_row();
  row[12345] = 100;
  EXPECT_EQ(s.sample(row), 12345);
}

TEST(Sampler, SameSeedReproducesAndAnotherSeedDiffers) {
  auto row = big_row();
  SamplingParams p{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 42};
  Sampler a(p), b(p), c({.temperature = 1.0f, .seed = 43});
  std::vector<TokenId> ta, tb, tc;
  for (int i = 0; i < 200; ++i) {
    ta.push_back(a.sample(row));
    tb.push_back(b.sample(row));
    tc.push_back(c.sample(row));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
}

TEST(Sampler, TopK1IsGreedy) {
  auto row = big_row();
  row[7] = row[31000] = 50;  // a tie: the lowest id wins, as in greedy
  const TokenId greedy = Sampler({.temperature = 0}).sample(row);
  EXPECT_EQ(greedy, 7);
  Sampler s({.temperature = 1.5f, .top_k = 1, .seed = 9});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(row), greedy);
}

TEST(Sampler, TinyTopPIsGreedy) {
  auto row = big_row();
  const TokenId greedy = Sampler({.temperature = 0}).sample(row);
  Sampler s({.temperature = 2.0f, .top_p = 1e-6f, .seed = 3});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(row), greedy);
}

TEST(Sampler, TopKKeepsOnlyTheKBest) {
  std::vector<float> row{0, 5, 1, 4, 2, 3};  // best three: ids 1, 3, 5
  Sampler s({.temperature = 100.0f, .top_k = 3, .seed = 1});
  std::vector<int> seen(row.size());
  for (int i = 0; i < 3000; ++i) ++seen[static_cast<size_t>(s.sample(row))];
  EXPECT_EQ(seen[0] + seen[2] + seen[4], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[3], 0);
  EXPECT_GT(seen[5], 0);
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.3, 0.15, 0.05: top_p 0.75 needs the first two
  // (0.5 < 0.75 <= 0.8), top_p 0.8 still two, 0.81 three.
  std::vector<float> row{std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  auto support = [&](float top_p) {
    Sampler s({.temperature = 1.0f, .top_p = top_p, .seed = 5});
    std::vector<int> seen(row.size());
    for (int i = 0; i < 4000; ++i) ++seen[static_cast<size_t>(s.sample(row))];
    std::vector<bool> used;
    for (int c : seen) used.push_back(c > 0);
    return used;
  };
  EXPECT_EQ(support(0.75f), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(support(0.79f), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(support(0.81f), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(support(1.0f), (std::vector<bool>{true, true, true, true}));
}

TEST(Sampler, TopPOnALargeFlatRowKeepsAboutPOfIt) {
  // Equal logits: the nucleus for p = 0.5 is the lowest half of the ids.
  std::vector<float> row(40000, 0.0f);
  Sampler s({.temperature = 1.0f, .top_p = 0.5f, .seed = 11});
  for (int i = 0; i < 500; ++i) EXPECT_LT(s.sample(row), 20000);
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  // softmax([0, ln 2, ln 3, ln 4] / T=1) = 0.1, 0.2, 0.3, 0.4.
  std::vector<float> row{0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
  Sampler s({.temperature = 1.0f, .seed = 2024});
  const int n = 40000;
  std::vector<int> seen(row.size());
  for (int i = 0; i < n; ++i) ++seen[static_cast<size_t>(s.sample(row))];
  for (size_t i = 0; i < row.size(); ++i)
    EXPECT_NEAR(seen[i] / static_cast<double>(n), 0.1 * static_cast<double>(i + 1), 0.015) << "token " << i;

  // Temperature 0.5 squares the odds: 1, 4, 9, 16 over 30.
  Sampler cold({.temperature = 0.5f, .seed = 7});
  std::vector<int> seen_cold(row.size());
  for (int i = 0; i < n; ++i) ++seen_cold[static_cast<size_t>(cold.sample(row))];
  const double expect[] = {1 / 30.0, 4 / 30.0, 9 / 30.0, 16 / 30.0};
  for (size_t i = 0; i < row.size(); ++i) EXPECT_NEAR(seen_cold[i] / static_cast<double>(n), expect[i], 0.015);
}

TEST(Sampler, MaskedLogitsAreNeverDrawn) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> row{-inf, 0.0f, nan, 0.0f, -inf};
  Sampler s({.temperature = 1.0f, .seed = 1});
  for (int i = 0; i < 500; ++i) {
    TokenId t = s.sample(row);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
  EXPECT_EQ(s.sample(std::vector<float>{0.0f, inf, 1.0f, inf}), 1);
  EXPECT_THROW(s.sample(std::vector<float>{-inf, nan}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{}), Error);
  EXPECT_THROW(Sampler({.temperature = 0}).sample(std::vector<float>{-inf}), Error);
}

// The ids a correct top-k / top-p would keep, from a plain sort in double.
std::set<TokenId> reference_kept(const std::vector<float>& row, float t, size_t k, double p) {
  std::vector<TokenId> ids(row.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
    return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)] || (row[static_cast<size_t>(a)] == row[static_cast<size_t>(b)] && a < b);
  });
  if (k > 0 && k < ids.size()) ids.resize(k);
  const double max = row[static_cast<size_t>(ids[0])];
  std::vector<double> w;
  for (TokenId id : ids) w.push_back(std::exp((row[static_cast<size_t>(id)] - max) / t));
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  std::set<TokenId> kept;
  double cum = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    kept.insert(ids[i]);
    cum += w[i];
    if (cum >= p * total) break;
  }
  return kept;
}

TEST(Sampler, DrawsStayInsideTheReferenceTopKAndNucleus) {
  // A peaked row (most tokens far below the best, as a trained model's are)
  // and a flat one, over both top-k paths (heap for small k, selection for
  // large) and the top-p quickselect. Draws must all be kept tokens; the
  // reference uses p a little larger so a token on the exact edge (where
  // our exp and libm's may round apart) is not counted against us.
  std::vector<float> peaked(50000), flat = big_row(50000);
  for (size_t i = 0; i < peaked.size(); ++i) peaked[i] = -0.01f * static_cast<float>((i * 7919) % 50000) + 8.0f * std::sin(static_cast<float>(i));
  struct Case {
    const std::vector<float>* row;
    SamplingParams p;
  };
  const Case cases[] = {
      {&peaked, {.temperature = 0.8f, .top_p = 0.9f, .seed = 1}},
      {&flat, {.temperature = 1.0f, .top_p = 0.3f, .seed = 2}},
      {&flat, {.temperature = 1.0f, .top_k = 40, .seed = 3}},
      {&flat, {.temperature = 2.0f, .top_k = 3000, .seed = 4}},
      {&peaked, {.temperature = 1.0f, .top_k = 2000, .top_p = 0.5f, .seed = 5}},
      {&flat, {.temperature = 0.7f, .top_k = 100, .top_p = 0.6f, .seed = 6}},
  };
  for (const Case& c : cases) {
    const std::set<TokenId> kept = reference_kept(*c.row, c.p.temperature, static_cast<size_t>(c.p.top_k),
                                                  std::min(1.0, c.p.top_p + 1e-4));
    Sampler s(c.p);
    std::set<TokenId> seen;
    for (int i = 0; i < 300; ++i) {
      TokenId t = s.sample(*c.row);
      EXPECT_TRUE(kept.count(t)) << "token " << t << " outside top_k " << c.p.top_k << " top_p " << c.p.top_p;
      seen.insert(t);
    }
    EXPECT_GT(seen.size(), 1u) << "top_k " << c.p.top_k << " top_p " << c.p.top_p;
  }
}

TEST(Sampler, WideRowsWithMaskedBlocksFollowTheSoftmax) {
  // Four live tokens spread over blocks of a 5000-token row, the rest -inf
  // or NaN, so whole blocks weigh 0 and NaN sits in vector lanes.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> row(5000, -inf);
  for (size_t i = 0; i < row.size(); i += 3) row[i] = std::numeric_limits<float>::quiet_NaN();
  const size_t live[] = {1, 1501, 2602, 4999};
  for (size_t j = 0; j < 4; ++j) row[live[j]] = std::log(static_cast<float>(j + 1));
  Sampler s({.temperature = 1.0f, .seed = 77});
  const int n = 40000;
  std::vector<int> seen(4);
  for (int i = 0; i < n; ++i) {
    const auto t = static_cast<size_t>(s.sample(row));
    const auto* at = std::find(std::begin(live), std::end(live), t);
    ASSERT_NE(at, std::end(live)) << "drew masked token " << t;
    ++seen[static_cast<size_t>(at - std::begin(live))];
  }
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(seen[j] / static_cast<double>(n), 0.1 * static_cast<double>(j + 1), 0.015);
  EXPECT_EQ(Sampler({.temperature = 0}).sample(row), 4999);
  Sampler top2({.temperature = 1.0f, .top_k = 2, .seed = 1});
  for (int i = 0; i < 100; ++i) {
    TokenId t = top2.sample(row);
    EXPECT_TRUE(t == 2602 || t == 4999) << t;
  }
}

TEST(Sampler, TinyTemperatureIsStillWellDefined) {
  std::vector<float> row{1.0f, 1.5f, 1.4999f};
  Sampler s({.temperature = 1e-30f, .seed = 1});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(row), 1);
}

TEST(Sampler, BadParamsNameTheField) {
  EXPECT_NE(error_of({.temperature = -0.1f}).find("temperature"), std::string::npos);
  EXPECT_NE(error_of({.temperature = std::numeric_limits<float>::infinity()}).find("temperature"), std::string::npos);
  EXPECT_NE(error_of({.temperature = std::nanf("")}).find("temperature"), std::string::npos);
  EXPECT_NE(error_of({.top_k = -1}).find("top_k"), std::string::npos);
  EXPECT_NE(error_of({.top_p = 0.0f}).find("top_p"), std::string::npos);
  EXPECT_NE(error_of({.top_p = 1.01f}).find("top_p"), std::string::npos);
  EXPECT_NE(error_of({.top_p = std::nanf("")}).find("top_p"), std::string::npos);
  EXPECT_EQ(error_of({.temperature = 0, .top_k = 40, .top_p = 0.9f, .seed = 1}), "");
}

}  // namespace
}  // namespace kvgate
