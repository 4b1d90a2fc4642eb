// Reading a streamed completion: SSE events split at any byte, the kinds
// of chunk, the usage with kvgate's cost, and bad frames named, not trusted.
#include <gtest/gtest.h>

#include "gateway/tools/loadgen/stream_frames.h"

namespace kvgate::loadgen {
namespace {

const std::string kStream =
    "data: {\"choices\":[{\"text\":\"a\",\"index\":0}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"text\":\"b\",\"index\":0,\"finish_reason\":\"length\"}],\"usage\":null}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":2,\"total_tokens\":42,"
    "\"prompt_tokens_details\":{\"cached_tokens\":32},\"kvgate\":{\"fresh_prefill_tokens\":8,"
    "\"cost_micros\":17,\"currency\":\"USD\"}}}\n\n"
    "data: [DONE]\n\n";

TEST(SseSplitter, SplitsEventsFedAtAnyByteBoundary) {
  std::vector<std::string> whole;
  SseSplitter a;
  a.feed(kStream, whole);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[3], "[DONE]");
  for (size_t piece = 1; piece <= 7; ++piece) {
    SseSplitter s;
    std::vector<std::string> got;
    for (size_t i = 0; i < kStream.size(); i += piece) s.feed(std::string_view(kStream).substr(i, piece), got);
    EXPECT_EQ(got, whole) << "pieces of " << piece;
    EXPECT_EQ(s.pending(), 0u);
  }
}

TEST(SseSplitter, CrLfCommentsAndMultiLineData) {
  SseSplitter s;
  std::vector<std::string> got;
  s.feed(": keep-alive\r\n\r\ndata: one\r\ndata:two\r\n\r\nevent: x\ndata: three\n\ndata: cut", got);
  EXPECT_EQ(got, (std::vector<std::string>{"one\ntwo", "three"}));
  EXPECT_GT(s.pending(), 0u);  // "data: cut" never ended
}

TEST(StreamFrame, KindsOfChunk) {
  StreamFrame f = read_stream_frame(R"({"choices":[{"text":"a"}],"usage":null})");
  EXPECT_EQ(f.kind, StreamFrame::Kind::kChunk);
  EXPECT_TRUE(f.has_choice);
  EXPECT_FALSE(f.usage);

  f = read_stream_frame("[DONE]");
  EXPECT_EQ(f.kind, StreamFrame::Kind::kDone);

  f = read_stream_frame(R"({"error":{"message":"engine stopped","type":"server_error"}})");
  EXPECT_EQ(f.kind, StreamFrame::Kind::kError);
  EXPECT_EQ(f.message, "engine stopped");
}

TEST(StreamFrame, UsageWithKvgatesExtension) {
  std::vector<std::string> events;
  SseSplitter s;
  s.feed(kStream, events);
  const StreamFrame f = read_stream_frame(events[2]);
  ASSERT_EQ(f.kind, StreamFrame::Kind::kChunk);
  EXPECT_FALSE(f.has_choice);
  ASSERT_TRUE(f.usage);
  EXPECT_EQ(f.usage->prompt_tokens, 40);
  EXPECT_EQ(f.usage->completion_tokens, 2);
  EXPECT_EQ(f.usage->cached_tokens, 32);
  EXPECT_EQ(f.usage->fresh_prefill_tokens, 8);
  EXPECT_EQ(f.usage->cost_micros, 17);
}

TEST(StreamFrame, OpenAIsUsageAloneIsEnough) {
  const StreamFrame f = read_stream_frame(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})");
  ASSERT_TRUE(f.usage);
  EXPECT_EQ(f.usage->cached_tokens, 0);
  EXPECT_FALSE(f.usage->cost_micros);
}

TEST(StreamFrame, BadFramesAreMalformedWithAReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "a stream frame is not JSON"},
      {"[1]", "a stream frame is not a JSON object"},
      {R"({"choices":{}})", "\"choices\" is not an array"},
      {R"({"usage":7})", "\"usage\" is not an object"},
      {R"({"usage":{"prompt_tokens":-1,"completion_tokens":1}})", "\"usage\" lacks prompt_tokens or completion_tokens"},
      {R"({"usage":{"prompt_tokens":"3","completion_tokens":1}})", "\"usage\" lacks prompt_tokens or completion_tokens"},
  };
  for (const auto& [data, why] : cases) {
    const StreamFrame f = read_stream_frame(data);
    EXPECT_EQ(f.kind, StreamFrame::Kind::kMalformed) << data;
    EXPECT_EQ(f.message.rfind(why, 0), 0u) << data << ": " << f.message;
  }
}

}  // namespace
}  // namespace kvgate::loadgen
