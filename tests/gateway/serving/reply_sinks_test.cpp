// The reply sinks (reply_sinks.h) fed as the pipeline feeds them, into a
// ReplyRecorder (no engine, no socket): a whole response is one JSON body
// with the text and the ledger's usage; a stream is SSE "data:" frames
// held until the request is accepted, then sent in the order they were
// made, ending with the finish, the usage when asked, and [DONE]; a failure
// is OpenAI's error, whole or as a last frame; a front names its replica.
#include "gateway/serving/reply_sinks.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/gateway/server/reply_recorder.h"
#include "tests/gateway/server/sse_frames.h"
#include "tests/gateway/serving/api_error_shape.h"

namespace kvgate::serving {
namespace {

namespace json = boost::json;
using openai::Endpoint;
using server::ReplyEvent;
using server::testing::header;
using server::testing::ReplyRecorder;
using server::testing::sse_frames;
using Kind = ReplyEvent::Kind;

const openai::ResponseMeta kMeta{"cmpl-abc", 1700000000, "stories260K"};
const server::HttpHeaders kHeaders{{"x-request-id", "req_abc"}};

// A request that ended: 10 prompt tokens (4 cached on the device, 2 on the
// host, 4 computed), 3 written to the cache, 2 generated, 123 micro-dollars.
Served served(FinishReason finish = FinishReason::kLength) {
  Served s;
  s.finish = finish;
  s.usage = {.prompt_tokens = 10,
             .cached_device = 4,
             .cached_host = 2,
             .cached_disk = 0,
             .fresh_prefill = 4,
             .cache_written = 3,
             .output_tokens = 2};
  s.cost_micros = 123;
  s.recorded = true;
  return s;
}

Served failed(std::string why) {
  Served s;
  s.error = std::move(why);
  s.request_id = "req_abc";
  return s;
}

// The usage every client of served() must be shown, as OpenAI's fields and kvgate's.
void expect_served_usage(const json::value& u) {
  EXPECT_EQ(u.at("prompt_tokens").to_number<int>(), 10);
  EXPECT_EQ(u.at("completion_tokens").to_number<int>(), 2);
  EXPECT_EQ(u.at("total_tokens").to_number<int>(), 12);
  EXPECT_EQ(u.at("prompt_tokens_details").at("cached_tokens").to_number<int>(), 6);
  const json::value& ext = u.at("kvgate");
  EXPECT_EQ(ext.at("cached_tokens_by_tier"), json::parse(R"({"device":4,"host":2,"disk":0})"));
  EXPECT_EQ(ext.at("fresh_prefill_tokens").to_number<int>(), 4);
  EXPECT_EQ(ext.at("cache_written_tokens").to_number<int>(), 3);
  EXPECT_EQ(ext.at("cost_micros").to_number<int>(), 123);
  EXPECT_FALSE(ext.as_object().contains("cache_pin")) << "no pin was asked";
}

struct Recorded {
  std::shared_ptr<ReplyRecorder> rec = std::make_shared<ReplyRecorder>();
  server::Reply reply{rec, 1};
};

TEST(ReplySinks, AWholeCompletionIsOneJsonBodyWithAllTheTextAndTheLedgersUsage) {
  Recorded r;
  WholeReplySink sink(r.reply, Endpoint::kCompletions, kMeta, kHeaders);
  sink.on_text("Once");
  sink.on_text(" upon");
  EXPECT_TRUE(r.rec->events().empty()) << "nothing is sent before the request ends";
  sink.on_done(served());
  EXPECT_TRUE(r.rec->events().empty()) << "nor before the pipeline has accepted it (open)";
  sink.open({{"x-ratelimit-remaining-requests", "7"}});
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Kind::kSend);
  EXPECT_EQ(ev[0].status, 200);
  EXPECT_EQ(header(ev[0], "content-type"), "application/json");
  EXPECT_EQ(header(ev[0], "x-request-id"), "req_abc");
  EXPECT_EQ(header(ev[0], "x-ratelimit-remaining-requests"), "7") << "open's headers join the response's";
  const json::value body = json::parse(ev[0].body);
  EXPECT_EQ(body.at("id"), "cmpl-abc");
  EXPECT_EQ(body.at("object"), "text_completion");
  EXPECT_EQ(body.at("created").to_number<int64_t>(), 1700000000);
  EXPECT_EQ(body.at("model"), "stories260K");
  EXPECT_EQ(body.at("choices"),
            json::parse(R"([{"text":"Once upon","index":0,"logprobs":null,"finish_reason":"length"}])"));
  expect_served_usage(body.at("usage"));
}

TEST(ReplySinks, AWholeChatCompletionIsTheAssistantsMessage) {
  Recorded r;
  WholeReplySink sink(r.reply, Endpoint::kChatCompletions, {"chatcmpl-abc", 1700000000, "stories260K"}, {});
  sink.open();
  sink.on_text("Hello");
  sink.on_done(served(FinishReason::kStop));
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_EQ(ev.size(), 1u);
  const json::value body = json::parse(ev[0].body);
  EXPECT_EQ(body.at("object"), "chat.completion");
  EXPECT_EQ(body.at("choices").at(0).at("message"), json::parse(R"({"role":"assistant","content":"Hello"})"));
  EXPECT_EQ(body.at("choices").at(0).at("finish_reason"), "stop");
  expect_served_usage(body.at("usage"));
}

const openai::ToolCallContext kHermes{openai::ToolCallFormat::kHermes, "call_abc_", {"get_weather"}};
constexpr const char* kCall = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";

// A chat that offered tools: the reply's calls become message.tool_calls
// and finish_reason "tool_calls", with no markup left in the content.
TEST(ReplySinks, AWholeReplyThatCallsAToolCarriesItsCalls) {
  Recorded r;
  std::vector<std::string> counted;
  WholeReplySink sink(r.reply, Endpoint::kChatCompletions, {"chatcmpl-abc", 1700000000, "m"}, {}, kHermes,
                      [&](std::string_view outcome) { counted.emplace_back(outcome); });
  sink.open();
  sink.on_text("Checking.\n<tool_");
  sink.on_text(std::string(kCall).substr(6));
  sink.on_done(served(FinishReason::kStop));
  const json::value body = json::parse(r.rec->events().at(0).body);
  EXPECT_EQ(body.at("choices").at(0).at("message"),
            json::parse(R"({"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_abc_0","type":"function",
                           "function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]})"));
  EXPECT_EQ(body.at("choices").at(0).at("finish_reason"), "tool_calls");
  EXPECT_EQ(counted, std::vector<std::string>{"calls"});
}

TEST(ReplySinks, AStreamedToolCallIsItsIdAndNameThenItsArgumentsNeverMarkup) {
  Recorded r;
  std::vector<std::string> counted;
  StreamReplySink sink(r.reply, Endpoint::kChatCompletions, {{"chatcmpl-abc", 1700000000, "m"}, false}, {}, kHermes,
                       [&](std::string_view outcome) { counted.emplace_back(outcome); });
  sink.open();
  for (char c : std::string(kCall)) sink.on_text(std::string(1, c));  // a token a byte
  sink.on_done(served(FinishReason::kStop));
  const server::testing::SseFrames f = sse_frames(r.rec->events());
  ASSERT_EQ(f.data.size(), 5u);  // role, the call's head, its arguments, the finish, [DONE]
  auto choice = [&](size_t i) { return json::parse(f.data[i]).at("choices").at(0); };
  EXPECT_EQ(choice(1).at("delta"), json::parse(R"({"tool_calls":[{"index":0,"id":"call_abc_0","type":"function",
                                                  "function":{"name":"get_weather","arguments":""}}]})"));
  EXPECT_EQ(choice(2).at("delta"),
            json::parse(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Rome\"}"}}]})"));
  EXPECT_EQ(choice(3).at("finish_reason"), "tool_calls");
  EXPECT_EQ(counted, std::vector<std::string>{"calls"});
}

TEST(ReplySinks, AReplyThatOpensACallButIsNoneIsTextAndCountedSo) {
  Recorded r;
  std::vector<std::string> counted;
  WholeReplySink sink(r.reply, Endpoint::kChatCompletions, {"chatcmpl-abc", 1700000000, "m"}, {}, kHermes,
                      [&](std::string_view outcome) { counted.emplace_back(outcome); });
  sink.open();
  sink.on_text("<tool_call>{oops</tool_call>");
  sink.on_done(served(FinishReason::kStop));
  const json::value body = json::parse(r.rec->events().at(0).body);
  EXPECT_EQ(body.at("choices").at(0).at("message").at("content"), "<tool_call>{oops</tool_call>");
  EXPECT_EQ(body.at("choices").at(0).at("finish_reason"), "stop");
  EXPECT_EQ(counted, std::vector<std::string>{"unparsed"});
}

TEST(ReplySinks, AWholeResponseThatFailedIsA500InOpenAisShapeWithItsHeaders) {
  Recorded r;
  WholeReplySink sink(r.reply, Endpoint::kCompletions, kMeta, kHeaders);
  sink.open();
  sink.on_text("Once");
  sink.on_done(failed("the ledger is unavailable"));
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(testing::is_api_error(ev[0], 500, "server_error", "internal_error"));
  // The detail is the operator's (the pipeline logs it); the client gets the id to quote.
  EXPECT_EQ(ev[0].body.find("the ledger is unavailable"), std::string::npos) << ev[0].body;
  EXPECT_NE(ev[0].body.find("req_abc"), std::string::npos) << ev[0].body;
  EXPECT_EQ(ev[0].body.find("Once"), std::string::npos) << "no partial text in an error";
  EXPECT_EQ(header(ev[0], "x-request-id"), "req_abc");
}

TEST(ReplySinks, AWholeResponseNamesTheReplicaItLastRanOnOnce) {
  Recorded r;
  WholeReplySink sink(r.reply, Endpoint::kCompletions, kMeta, kHeaders);
  sink.on_placed("replica-a");
  sink.on_placed("replica-b");  // a retry before the first token moved it
  sink.open();
  sink.on_done(served());
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_EQ(ev.size(), 1u);
  int named = 0;
  for (const auto& [name, value] : ev[0].headers) named += name == "x-kvgate-replica";
  EXPECT_EQ(named, 1);
  EXPECT_EQ(header(ev[0], "x-kvgate-replica"), "replica-b");
}

TEST(ReplySinks, AStreamHoldsItsFramesUntilOpenThenSendsSseDataInOrderEndingInDone) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kCompletions, {kMeta, false}, kHeaders);
  sink.on_text("Once");
  EXPECT_TRUE(r.rec->events().empty()) << "a stream must not start before the request is accepted";
  sink.open();
  sink.on_text(" upon");
  sink.on_done(served());
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.front().status, 200);
  EXPECT_EQ(header(ev.front(), "content-type"), "text/event-stream");
  EXPECT_EQ(header(ev.front(), "cache-control"), "no-cache");
  EXPECT_EQ(header(ev.front(), "x-request-id"), "req_abc");
  EXPECT_EQ(ev.back().kind, Kind::kFinish);

  const server::testing::SseFrames f = sse_frames(ev);
  EXPECT_TRUE(f.well_formed);
  ASSERT_EQ(f.data.size(), 4u);
  const json::value once = json::parse(f.data[0]), upon = json::parse(f.data[1]), last = json::parse(f.data[2]);
  EXPECT_EQ(once.at("object"), "text_completion");
  EXPECT_EQ(once.at("id"), "cmpl-abc");
  EXPECT_EQ(once.at("choices").at(0).at("text"), "Once");
  EXPECT_TRUE(once.at("choices").at(0).at("finish_reason").is_null());
  EXPECT_EQ(upon.at("choices").at(0).at("text"), " upon");
  EXPECT_EQ(last.at("choices").at(0).at("text"), "");
  EXPECT_EQ(last.at("choices").at(0).at("finish_reason"), "length");
  EXPECT_FALSE(last.as_object().contains("usage")) << "usage only when stream_options asks";
  EXPECT_EQ(f.data[3], "[DONE]");
}

TEST(ReplySinks, AChatStreamOpensWithTheRoleBeforeHeldTextAndEndsWithAnEmptyDeltaFinish) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kChatCompletions, {{"chatcmpl-abc", 1700000000, "stories260K"}, false}, {});
  sink.on_text("Hello");
  sink.open();
  sink.on_done(served(FinishReason::kStop));
  const server::testing::SseFrames f = sse_frames(r.rec->events());
  EXPECT_TRUE(f.well_formed);
  ASSERT_EQ(f.data.size(), 4u);
  auto choice = [&](size_t i) { return json::parse(f.data[i]).at("choices").at(0); };
  EXPECT_EQ(json::parse(f.data[0]).at("object"), "chat.completion.chunk");
  EXPECT_EQ(choice(0).at("delta"), json::parse(R"({"role":"assistant","content":""})"));
  EXPECT_EQ(choice(1).at("delta"), json::parse(R"({"content":"Hello"})"));
  EXPECT_EQ(choice(2).at("delta"), json::object());
  EXPECT_EQ(choice(2).at("finish_reason"), "stop");
  EXPECT_EQ(f.data[3], "[DONE]");
}

TEST(ReplySinks, WithIncludeUsageEveryChunkSaysNullAndAUsageChunkPrecedesDone) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kCompletions, {kMeta, true}, kHeaders);
  sink.open();
  sink.on_text("Once");
  sink.on_done(served());
  const server::testing::SseFrames f = sse_frames(r.rec->events());
  ASSERT_EQ(f.data.size(), 4u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(json::parse(f.data[i]).at("usage").is_null()) << f.data[i];
  const json::value usage = json::parse(f.data[2]);
  EXPECT_EQ(usage.at("object"), "text_completion");
  EXPECT_TRUE(usage.at("choices").as_array().empty());
  expect_served_usage(usage.at("usage"));
  EXPECT_EQ(f.data[3], "[DONE]");
}

TEST(ReplySinks, ARequestThatEndedBeforeOpenIsSentWholeByOpen) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kCompletions, {kMeta, false}, kHeaders);
  sink.on_text("Once");
  sink.on_done(served());  // a fast engine: the end came before start() returned
  EXPECT_TRUE(r.rec->events().empty());
  sink.open();
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_EQ(ev.size(), 5u);  // start, text, finish chunk, [DONE], the end
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.back().kind, Kind::kFinish);
  const server::testing::SseFrames f = sse_frames(ev);
  EXPECT_EQ(json::parse(f.data[0]).at("choices").at(0).at("text"), "Once");
  EXPECT_EQ(f.data.back(), "[DONE]");
}

TEST(ReplySinks, AFailureMidStreamIsAnErrorFrameThenDone) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kChatCompletions, {kMeta, true}, kHeaders);
  sink.open();
  sink.on_text("Once");
  sink.on_done(failed("the device failed"));
  const std::vector<ReplyEvent> ev = r.rec->events();
  EXPECT_EQ(ev.back().kind, Kind::kFinish) << "the stream ends cleanly, not cut off";
  const server::testing::SseFrames f = sse_frames(ev);
  EXPECT_TRUE(f.well_formed);
  ASSERT_EQ(f.data.size(), 4u);  // role, text, error, [DONE]: no finish chunk, no usage
  const json::value error = json::parse(f.data[2]);
  EXPECT_EQ(error.at("error").at("type"), "server_error");
  EXPECT_EQ(error.at("error").at("code"), "internal_error");
  EXPECT_EQ(error.at("error").at("message"),
            "The server had an error while processing your request; quote its id, req_abc, to the operator.");
  EXPECT_EQ(f.data[3], "[DONE]");
}

TEST(ReplySinks, AStreamNamesTheReplicaPlacedBeforeOpenAndNoLaterOne) {
  Recorded r;
  StreamReplySink sink(r.reply, Endpoint::kCompletions, {kMeta, false}, kHeaders);
  sink.on_placed("replica-a");
  sink.on_placed("replica-b");
  sink.open();
  sink.on_placed("replica-c");  // the header has gone out
  sink.on_done(served());
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(header(ev.front(), "x-kvgate-replica"), "replica-b");
  for (const ReplyEvent& e : ev) EXPECT_EQ(e.body.find("replica-c"), std::string::npos);
}

// Text arrives on the engine loop while the I/O thread opens the stream:
// every piece goes out once, in the order it was made, after the start.
TEST(ReplySinks, TextRacingOpenLeavesInTheOrderItWasMade) {
  Recorded r;
  auto sink =
      std::make_shared<StreamReplySink>(r.reply, Endpoint::kCompletions, openai::StreamContext{kMeta, false}, kHeaders);
  constexpr int kPieces = 200;
  std::thread engine_loop([sink] {
    for (int i = 0; i < kPieces; ++i) sink->on_text(std::to_string(i) + ",");
  });
  sink->open();
  engine_loop.join();
  sink->on_done(served());
  const std::vector<ReplyEvent> ev = r.rec->events();
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.back().kind, Kind::kFinish);
  std::string text, want;
  for (int i = 0; i < kPieces; ++i) want += std::to_string(i) + ",";
  const server::testing::SseFrames f = sse_frames(ev);
  EXPECT_TRUE(f.well_formed);
  for (size_t i = 0; i + 1 < f.data.size(); ++i)
    text += json::parse(f.data[i]).at("choices").at(0).at("text").as_string();
  EXPECT_EQ(text, want);
}

}  // namespace
}  // namespace kvgate::serving
