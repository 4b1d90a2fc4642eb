// Tenants x system prompts x multi-turn users -> planned requests. Pure; any thread.
#include "gateway/tools/loadgen/synthetic_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "gateway/tools/loadgen/arrivals.h"
#include "gateway/tools/loadgen/token_blocks.h"

namespace kvgate::loadgen {

namespace {

void at_least(int64_t v, int64_t min, const char* flag) {
  if (v < min) throw Error(std::string(flag) + " must be at least " + std::to_string(min) + " (got " + std::to_string(v) + ")");
}

// The id of one piece of text: its kind and where it belongs. Kinds keep a
// system prompt, a user message and an answer apart even with equal indices.
enum class Piece : uint64_t { kSystem = 1, kUser = 2, kAnswer = 3 };
uint64_t piece_id(Piece kind, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  return mix64(mix64(mix64(mix64(static_cast<uint64_t>(kind)) ^ a) ^ b) ^ c);
}

}  // namespace

Workload synthetic_workload(const SyntheticSpec& s) {
  at_least(s.tenants, 1, "--tenants");
  at_least(s.system_prompts, 1, "--system-prompts");
  at_least(s.system_tokens, 0, "--system-tokens");
  at_least(s.users, 1, "--users");
  at_least(s.turns, 1, "--turns");
  at_least(s.user_tokens, 1, "--user-tokens");
  at_least(s.output_tokens, 1, "--output-tokens");
  const int64_t longest = s.system_tokens + static_cast<int64_t>(s.turns) * (s.user_tokens + s.output_tokens);
  if (longest > (1 << 24)) throw Error("the synthetic prompts would be " + std::to_string(longest) + " tokens long");
  const int64_t total = static_cast<int64_t>(s.tenants) * s.users * s.turns;
  if (total > (1 << 22)) throw Error("the synthetic workload would be " + std::to_string(total) + " requests");

  const int32_t piece_max = std::max({s.system_tokens, s.user_tokens, s.output_tokens});
  const TokenBlocks tokens(piece_max, s.vocab_size, s.seed);

  struct User {
    int32_t tenant, index;
    Tokens history;  // system prompt + earlier turns (user message, answer)
    int64_t last = -1;  // the plan index of its latest turn
  };
  std::vector<User> users;
  for (int32_t t = 0; t < s.tenants; ++t)
    for (int32_t u = 0; u < s.users; ++u) {
      User user{t, u, {}, -1};
      tokens.append(piece_id(Piece::kSystem, static_cast<uint64_t>(u % s.system_prompts)), s.system_tokens,
                    user.history);
      users.push_back(std::move(user));
    }

  Workload w;
  w.name = "synthetic";
  w.tenants = s.tenants;
  w.requests.reserve(total);
  std::vector<size_t> order(users.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  uint64_t shuffle = mix64(s.seed ^ 0x5E1F'5E1Full);
  for (int32_t turn = 0; turn < s.turns; ++turn) {
    // Fisher-Yates with our own generator: the same order with any library.
    for (size_t i = order.size(); i > 1; --i) {
      shuffle += 0x9E3779B97F4A7C15ull;
      std::swap(order[i - 1], order[mix64(shuffle) % i]);
    }
    for (size_t idx : order) {
      User& u = users[idx];
      const auto t = static_cast<uint64_t>(u.tenant), ui = static_cast<uint64_t>(u.index);
      PlannedRequest p;
      p.tenant = u.tenant;
      p.after = u.last;
      p.max_tokens = s.output_tokens;
      p.prompt = u.history;
      tokens.append(piece_id(Piece::kUser, t, ui, static_cast<uint64_t>(turn)), s.user_tokens, p.prompt);
      // The next turn carries this one's message and its stand-in answer.
      u.history = p.prompt;
      tokens.append(piece_id(Piece::kAnswer, t, ui, static_cast<uint64_t>(turn)), s.output_tokens, u.history);
      u.last = static_cast<int64_t>(w.requests.size());
      w.requests.push_back(std::move(p));
    }
  }
  const std::vector<double> at = poisson_arrivals(w.requests.size(), s.request_rate, s.seed);
  for (size_t i = 0; i < w.requests.size(); ++i) w.requests[i].arrival_s = at[i];

  char rate[64] = "all at once";
  if (!std::isinf(s.request_rate)) std::snprintf(rate, sizeof rate, "Poisson at %.4g req/s", s.request_rate);
  char line[300];
  std::snprintf(line, sizeof line,
                "synthetic: %d tenants x %d users (%d system prompts of %d tokens), %d turns of %d user + %d output "
                "tokens, %lld requests, %s",
                s.tenants, s.users, s.system_prompts, s.system_tokens, s.turns, s.user_tokens, s.output_tokens,
                static_cast<long long>(total), rate);
  w.description = line;
  return w;
}

}  // namespace kvgate::loadgen
