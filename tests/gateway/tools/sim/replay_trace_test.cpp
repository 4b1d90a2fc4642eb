#include <gtest/gtest.h>

#include "base/error.h"
#include "gateway/tools/sim/replay_trace.h"

namespace kvgate::sim {
namespace {

std::string line(int64_t input, const std::string& ids) {
  return R"({"timestamp": 0, "input_length": )" + std::to_string(input) + R"(, "output_length": 1, "hash_ids": [)" + ids + "]}\n";
}

std::string error_of(const std::string& text) {
  try {
    parse_replay_trace(text, "t.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReplayTrace, PacksRequestsAndWeighsTheLastBlockByItsRemainder) {
  const ReplayTrace t = parse_replay_trace(line(1024, "0, 1") + "\n" + line(700, "0, 2"), "t.jsonl");
  ASSERT_EQ(t.requests(), 2);
  EXPECT_EQ(t.block_refs(), 4);
  EXPECT_EQ(std::vector<int32_t>(t.chain(1).begin(), t.chain(1).end()), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(t.block_tokens(0, 1), 512);
  EXPECT_EQ(t.block_tokens(1, 0), 512);
  EXPECT_EQ(t.block_tokens(1, 1), 188);
  EXPECT_EQ(t.id_limit(), 3);
  EXPECT_EQ(t.max_chain(), 2);
}

TEST(ReplayTrace, RenumbersIdsDenselyInOrderOfFirstAppearance) {
  const ReplayTrace t = parse_replay_trace(line(600, "9000000000000, 77") + line(10, "9000000000000"), "t.jsonl");
  EXPECT_EQ(std::vector<int32_t>(t.chain(0).begin(), t.chain(0).end()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(t.chain(1)[0], 0);
  EXPECT_EQ(t.id_limit(), 2);
}

TEST(ReplayTrace, BadLinesAreErrorsNamingTheLineAndTheField) {
  EXPECT_EQ(error_of(line(10, "0") + "{nope\n").substr(0, 30), "t.jsonl:2: not a JSON object: ");
  EXPECT_EQ(error_of(R"({"timestamp": 0, "input_length": 10, "output_length": 1})"),
            "t.jsonl:1: field \"hash_ids\" is missing");
  EXPECT_EQ(error_of(line(1025, "0, 1")), "t.jsonl:1: field \"hash_ids\" has 2 ids, but input_length 1025 needs 3 blocks of 512 tokens");
  EXPECT_EQ(error_of(line(600, "0, -1")), "t.jsonl:1: field \"hash_ids[1]\" must be an integer >= 0 (got -1)");
  EXPECT_EQ(error_of("\n\n"), "t.jsonl: no requests in the trace");
}

TEST(ReplayTrace, IdsThatDoNotFormPrefixChainsAreAnError) {
  EXPECT_EQ(error_of(line(1024, "0, 1") + line(1024, "2, 1")),
            "t.jsonl:2: hash id 1 is at position 1 after id 2, but line 1 has it at position 1 after id 0: the hash ids "
            "do not form prefix chains");
  EXPECT_EQ(error_of(line(1024, "0, 1") + line(1, "1")),
            "t.jsonl:2: hash id 1 is at position 0 after nothing, but line 1 has it at position 1 after id 0: the hash "
            "ids do not form prefix chains");
  EXPECT_EQ(error_of(line(1024, "5, 5")).substr(0, 45), "t.jsonl:1: hash id 5 is at position 1 after i");
}

TEST(ReplayTrace, AFileThatCannotBeReadIsAnErrorNamingIt) {
  EXPECT_THROW(read_replay_trace("/nonexistent/trace.jsonl"), Error);
}

TEST(ReplayTrace, TheSummaryCountsTheUnboundedCachesHits) {
  const ReplayTrace t = parse_replay_trace(line(1024, "0, 1") + line(700, "0, 2") + line(1500, "0, 1, 3"), "t.jsonl");
  const TraceSummary s = summarize(t);
  EXPECT_EQ(s.requests, 3);
  EXPECT_EQ(s.block_refs, 7);
  EXPECT_EQ(s.distinct_blocks, 4);
  EXPECT_EQ(s.prompt_tokens, 1024 + 700 + 1500);
  EXPECT_EQ(s.unbounded_hit_tokens, 512 + 1024);
  EXPECT_EQ(s.unbounded_hit_blocks, 3);
}

}  // namespace
}  // namespace kvgate::sim
