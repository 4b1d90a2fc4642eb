// A trace scaled to the machine: prefix sharing survives the scaling block
// for block, lengths and times scale as the flags say, the window and the
// user sample pick whole conversations, tenants are spread by user.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "base/error.h"
#include "gateway/tools/loadgen/trace_workload.h"
#include "tests/shared_data.h"

namespace kvgate::loadgen {
namespace {

trace::TraceRecord rec(int64_t ts, int64_t input, int64_t output, std::vector<uint64_t> ids) {
  trace::TraceRecord r;
  r.timestamp_ms = ts;
  r.input_length = input;
  r.output_length = output;
  r.hash_ids = std::move(ids);
  return r;
}

size_t common_prefix(const Tokens& a, const Tokens& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(TraceWorkload, SharedIdsShareExactlyTheirScaledBlocks) {
  // Same first three ids, then different: 3 whole blocks in common, no more.
  const std::vector<trace::TraceRecord> t = {rec(0, 2048, 100, {0, 1, 2, 3}), rec(10, 2048, 100, {0, 1, 2, 9})};
  TraceScaling s;
  s.block_tokens = 16;
  const Workload w = trace_workload(t, s);
  ASSERT_EQ(w.requests.size(), 2u);
  EXPECT_EQ(w.requests[0].prompt.size(), 64u);
  EXPECT_EQ(common_prefix(w.requests[0].prompt, w.requests[1].prompt), 48u);
}

TEST(TraceWorkload, TheLastBlockKeepsItsShare) {
  TraceScaling s;
  s.block_tokens = 32;
  // 512 + 128: the last block is a quarter full -> 32 + 8 tokens.
  EXPECT_EQ(trace_workload({rec(0, 640, 1, {0, 1})}, s).requests[0].prompt.size(), 40u);
  // A 1-token last block still gives one token.
  EXPECT_EQ(trace_workload({rec(0, 513, 1, {0, 1})}, s).requests[0].prompt.size(), 33u);
  // The partial block is the start of the same id's whole block elsewhere.
  const Workload w = trace_workload({rec(0, 640, 1, {0, 1}), rec(0, 1024, 1, {0, 1})}, s);
  EXPECT_EQ(common_prefix(w.requests[0].prompt, w.requests[1].prompt), 40u);
}

TEST(TraceWorkload, OutputsScaleWithThePromptsUnlessToldOtherwise) {
  TraceScaling s;
  s.block_tokens = 16;  // 1/32
  const std::vector<trace::TraceRecord> t = {rec(0, 10, 320, {0}), rec(0, 10, 3, {0})};
  Workload w = trace_workload(t, s);
  EXPECT_EQ(w.requests[0].max_tokens, 10);
  EXPECT_EQ(w.requests[1].max_tokens, 1);  // never 0
  s.output_scale = 0.5;
  s.max_output_tokens = 100;
  w = trace_workload(t, s);
  EXPECT_EQ(w.requests[0].max_tokens, 100);
  EXPECT_EQ(w.requests[1].max_tokens, 2);
}

TEST(TraceWorkload, TimeScalesFromTheFirstKeptRequest) {
  const std::vector<trace::TraceRecord> t = {rec(1000, 10, 1, {0}), rec(3000, 10, 1, {0}), rec(5000, 10, 1, {0})};
  TraceScaling s;
  s.time_scale = 0.5;
  s.start_ms = 2000;
  const Workload w = trace_workload(t, s);
  ASSERT_EQ(w.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(w.requests[0].arrival_s, 0.0);
  EXPECT_DOUBLE_EQ(w.requests[1].arrival_s, 1.0);
  s.max_requests = 1;
  EXPECT_EQ(trace_workload(t, s).requests.size(), 1u);
}

TEST(TraceWorkload, LongPromptsAreCutToTheirPrefix) {
  TraceScaling s;
  s.block_tokens = 16;
  s.max_prompt_tokens = 20;
  const Workload cut = trace_workload({rec(0, 2048, 1, {0, 1, 2, 3})}, s);
  s.max_prompt_tokens = 0;
  const Workload whole = trace_workload({rec(0, 2048, 1, {0, 1, 2, 3})}, s);
  ASSERT_EQ(cut.requests[0].prompt.size(), 20u);
  EXPECT_EQ(common_prefix(cut.requests[0].prompt, whole.requests[0].prompt), 20u);
}

TEST(TraceWorkload, UsersAreConversationsAndStayOnOneTenant) {
  const auto trace = trace::read_trace_file(kvgate::testing::shared_path("traces/conversation_trace.jsonl"));
  TraceScaling s;
  s.tenants = 4;
  s.sample_users = 16;
  const Workload w = trace_workload(trace, s);
  // Sampling keeps about one request in 16, every turn of a kept user, and
  // all four tenants.
  EXPECT_GT(w.requests.size(), trace.size() / 32);
  EXPECT_LT(w.requests.size(), trace.size() / 8);
  std::map<uint64_t, size_t> kept_turns, all_turns;
  for (const trace::TraceRecord& r : trace) ++all_turns[trace_user(r)];
  std::set<int32_t> tenants;
  std::map<uint64_t, std::set<int32_t>> tenant_of;
  for (const PlannedRequest& p : w.requests) {
    const trace::TraceRecord& r = trace[static_cast<size_t>(p.trace_line - 1)];  // the file has no blank lines
    ASSERT_EQ(r.line, p.trace_line);
    const uint64_t u = trace_user(r);
    ++kept_turns[u];
    tenants.insert(p.tenant);
    tenant_of[u].insert(p.tenant);
  }
  for (const auto& [u, n] : kept_turns) {
    if (u == 0) continue;  // single-block prompts all count as user 0
    EXPECT_EQ(n, all_turns[u]) << "user " << u << " was not kept whole";
    EXPECT_EQ(tenant_of[u].size(), 1u) << "user " << u << " is on two tenants";
  }
  EXPECT_EQ(tenants.size(), 4u);
}

TEST(TraceWorkload, TheSameFlagsPlanTheSameRequests) {
  const std::vector<trace::TraceRecord> t = {rec(0, 700, 10, {0, 5}), rec(7, 100, 10, {0})};
  TraceScaling s;
  s.tenants = 3;
  const Workload a = trace_workload(t, s), b = trace_workload(t, s);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].prompt, b.requests[i].prompt);
    EXPECT_EQ(a.requests[i].tenant, b.requests[i].tenant);
  }
}

TEST(TraceWorkload, OutOfRangeScalingIsNamed) {
  const std::vector<trace::TraceRecord> t = {rec(0, 10, 1, {0})};
  auto msg = [&](TraceScaling s) {
    try {
      trace_workload(t, s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  TraceScaling s;
  s.time_scale = 0;
  EXPECT_EQ(msg(s), "--time-scale must be a number above 0");
  s = {};
  s.sample_users = 0;
  EXPECT_EQ(msg(s), "--sample-users must be at least 1");
  s = {};
  s.block_tokens = 0;
  EXPECT_EQ(msg(s), "--block-tokens must be at least 1");
}

}  // namespace
}  // namespace kvgate::loadgen
