// Optimal string alignment distance over two rows of the usual table; words
// here are config keys (a few dozen bytes), so the cost is nothing, and very
// long words (a fuzzer's, a pasted line) are not compared at all.
#include "gateway/config/nearest_name.h"

#include <algorithm>
#include <vector>

namespace kvgate::config {
namespace {

constexpr size_t kLongestWord = 64;

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest_name(std::string_view word, std::span<const std::string> candidates) {
  if (word.empty() || word.size() > kLongestWord) return std::nullopt;
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  size_t best_d = allowed + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best) return best;
  // A longer or shorter spelling of a real key: kv_budget_bytes, threads.
  for (const std::string& c : candidates) {
    const std::string_view shorter = c.size() < word.size() ? std::string_view(c) : word;
    const std::string_view longer = c.size() < word.size() ? word : std::string_view(c);
    if (shorter.size() >= 4 && longer.find(shorter) != std::string_view::npos) return c;
  }
  return std::nullopt;
}

}  // namespace kvgate::config
