// The Mooncake trace reader: the real trace reads whole, and every kind of
// bad line is an Error naming the file, the line and the field.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "gateway/tools/trace/trace_reader.h"
#include "tests/shared_data.h"

namespace kvgate::trace {
namespace {

// The message of the Error that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    parse_trace(text, "t.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TraceReader, ReadsALine) {
  const auto r = parse_trace(
      R"({"timestamp": 27482, "input_length": 1025, "output_length": 52, "hash_ids": [46, 47, 2353]})"
      "\n",
      "t.jsonl");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].timestamp_ms, 27482);
  EXPECT_EQ(r[0].input_length, 1025);
  EXPECT_EQ(r[0].output_length, 52);
  EXPECT_EQ(r[0].hash_ids, (std::vector<uint64_t>{46, 47, 2353}));
  EXPECT_EQ(r[0].line, 1);
}

TEST(TraceReader, SkipsBlankLinesAndKeepsLineNumbers) {
  const auto r = parse_trace(
      "\n"
      R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]})"
      "\n  \r\n"
      R"({"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [0, 1], "extra": "ignored"})",
      "t.jsonl");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].line, 2);
  EXPECT_EQ(r[1].line, 4);
}

TEST(TraceReader, AcceptsIntegersWrittenWithAZeroFraction) {
  const auto r =
      parse_trace(R"({"timestamp": 3.0, "input_length": 512.0, "output_length": 0, "hash_ids": [7.0]})", "t");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].timestamp_ms, 3);
  EXPECT_EQ(r[0].hash_ids[0], 7u);
}

TEST(TraceReader, TheSharedTraceReadsWhole) {
  const auto r = read_trace_file(kvgate::testing::shared_path("traces/conversation_trace.jsonl"));
  ASSERT_EQ(r.size(), 12031u);  // ../shared/traces/README.md
  EXPECT_EQ(r.front().timestamp_ms, 0);
  EXPECT_EQ(r.back().timestamp_ms, 3536999);
  EXPECT_EQ(r.front().hash_ids.size(), 14u);
}

TEST(TraceReader, BadLinesNameFileLineAndField) {
  const std::string ok = R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]})";
  struct Case {
    std::string line, message;
  };
  const Case cases[] = {
      {"{not json", "t.jsonl:2: not a JSON object"},
      {"[1, 2]", "t.jsonl:2: a line must be a JSON object, not an array"},
      {R"({"input_length": 10, "output_length": 1, "hash_ids": [0]})", "t.jsonl:2: field \"timestamp\" is missing"},
      {R"({"timestamp": "0", "input_length": 10, "output_length": 1, "hash_ids": [0]})",
       "t.jsonl:2: field \"timestamp\" must be an integer, not a string"},
      {R"({"timestamp": 1.5, "input_length": 10, "output_length": 1, "hash_ids": [0]})",
       "t.jsonl:2: field \"timestamp\" must be an integer >= 0 (got 1.5)"},
      {R"({"timestamp": 0, "input_length": -3, "output_length": 1, "hash_ids": [0]})",
       "t.jsonl:2: field \"input_length\" must be an integer >= 0 (got -3)"},
      {R"({"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []})",
       "t.jsonl:2: field \"input_length\" must be at least 1 (got 0)"},
      {R"({"timestamp": 0, "input_length": 10, "output_length": null, "hash_ids": [0]})",
       "t.jsonl:2: field \"output_length\" must be an integer, not null"},
      {R"({"timestamp": 0, "input_length": 10, "output_length": 1})", "t.jsonl:2: field \"hash_ids\" is missing"},
      {R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": {}})",
       "t.jsonl:2: field \"hash_ids\" must be an array, not an object"},
      {R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [-1]})",
       "t.jsonl:2: field \"hash_ids[0]\" must be an integer >= 0 (got -1)"},
      {R"({"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [0, "x"]})",
       "t.jsonl:2: field \"hash_ids[1]\" must be an integer >= 0 (got a string)"},
      {R"({"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [0, 1]})",
       "t.jsonl:2: field \"hash_ids\" has 2 ids, but input_length 1025 needs 3 blocks of 512 tokens"},
      {R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0, 1]})",
       "t.jsonl:2: field \"hash_ids\" has 2 ids, but input_length 10 needs 1 blocks of 512 tokens"},
      {R"({"timestamp": 99999999999999999999, "input_length": 10, "output_length": 1, "hash_ids": [0]})",
       "t.jsonl:2: field \"timestamp\" must be an integer >= 0"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(ok + "\n" + c.line + "\n");
    EXPECT_EQ(msg.rfind(c.message, 0), 0u) << "line: " << c.line << "\ngot: " << msg;
  }
}

TEST(TraceReader, TimestampsMustNotGoBack) {
  const std::string msg = error_of(
      R"({"timestamp": 10, "input_length": 10, "output_length": 1, "hash_ids": [0]})"
      "\n\n"
      R"({"timestamp": 9, "input_length": 10, "output_length": 1, "hash_ids": [0]})");
  EXPECT_EQ(msg, "t.jsonl:3: field \"timestamp\" 9 is before line 1's 10 (a trace is in arrival order)");
}

TEST(TraceReader, AMissingFileIsNamed) {
  try {
    read_trace_file("/nonexistent/trace.jsonl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/trace.jsonl: cannot open the trace file");
  }
}

TEST(TraceReader, OtherBlockSizesCheckTheChainAgainstThem) {
  TraceFormat f;
  f.block_tokens = 16;
  EXPECT_EQ(parse_trace(R"({"timestamp": 0, "input_length": 17, "output_length": 1, "hash_ids": [0, 1]})", "t", f)
                .size(),
            1u);
  EXPECT_THROW(parse_trace(R"({"timestamp": 0, "input_length": 17, "output_length": 1, "hash_ids": [0]})", "t", f),
               Error);
}

}  // namespace
}  // namespace kvgate::trace
