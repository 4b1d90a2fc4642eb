// Tool calls read from replies in each format, whole and streamed: every
// way of cutting a reply into pieces gives the same text and calls as
// reading it whole, and a reply that is not a call stays text.
#include "gateway/openai/tool_call_parser.h"

#include <gtest/gtest.h>

namespace kvgate::openai {
namespace {

ToolCallContext context(ToolCallFormat f) { return ToolCallContext{f, "call_x_", {"get_weather", "get_time"}}; }

std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \n");
  return a == std::string::npos ? "" : s.substr(a, s.find_last_not_of(" \n") - a + 1);
}

// The reply streamed in two pieces cut at `cut`, then finished.
ToolReply streamed(const ToolCallContext& ctx, std::string_view text, std::size_t cut) {
  ToolCallStream s(ctx);
  ToolReply r;
  for (const ToolCallStream::Step& step : {s.push(text.substr(0, cut)), s.push(text.substr(cut)), s.finish()}) {
    r.content += step.content;
    r.calls.insert(r.calls.end(), step.calls.begin(), step.calls.end());
  }
  r.unparsed = s.unparsed();
  return r;
}

// Whole, and streamed cut at every byte and one byte at a time: the same calls,
// and the same text (a stream may keep the spaces a whole reply trims).
void expect_reply(const ToolCallContext& ctx, std::string_view text, const std::string& content,
                  const std::vector<ToolCall>& calls, bool unparsed = false) {
  const ToolReply whole = parse_tool_reply(ctx, text);
  EXPECT_EQ(whole.content, content) << text;
  EXPECT_EQ(whole.calls, calls) << text;
  EXPECT_EQ(whole.unparsed, unparsed) << text;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const ToolReply s = streamed(ctx, text, cut);
    EXPECT_EQ(s.calls, calls) << text << " cut at " << cut;
    if (calls.empty()) {
      EXPECT_EQ(s.content, text) << "cut at " << cut;
    } else {
      EXPECT_EQ(trimmed(s.content), content) << text << " cut at " << cut;
    }
  }
  ToolCallStream bytes(ctx);
  std::vector<ToolCall> got;
  for (char c : text) {
    ToolCallStream::Step step = bytes.push(std::string_view(&c, 1));
    got.insert(got.end(), step.calls.begin(), step.calls.end());
  }
  ToolCallStream::Step last = bytes.finish();
  got.insert(got.end(), last.calls.begin(), last.calls.end());
  EXPECT_EQ(got, calls) << text;
}

TEST(ToolCallParser, Hermes) {
  const ToolCallContext ctx = context(ToolCallFormat::kHermes);
  expect_reply(ctx, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "",
               {{"call_x_0", "get_weather", R"({"city":"Paris"})"}});
  expect_reply(ctx,
               "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
               "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
               "Let me look.",
               {{"call_x_0", "get_weather", R"({"city":"Paris"})"}, {"call_x_1", "get_time", "{}"}});
  expect_reply(ctx, "No tools needed: 2 < 3 and <tool or <tool_cal are text.", "No tools needed: 2 < 3 and <tool or <tool_cal are text.", {});
}

TEST(ToolCallParser, WithoutParallelCallsOnlyTheFirstIsKept) {
  ToolCallContext ctx = context(ToolCallFormat::kHermes);
  ctx.parallel = false;
  const std::string two = "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>"
                          "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>";
  const std::vector<ToolCall> first = {{"call_x_0", "get_time", "{}"}};
  EXPECT_EQ(parse_tool_reply(ctx, two).calls, first);
  for (std::size_t cut = 0; cut <= two.size(); ++cut) EXPECT_EQ(streamed(ctx, two, cut).calls, first);
}

TEST(ToolCallParser, HermesThatIsNotACallIsText) {
  const ToolCallContext ctx = context(ToolCallFormat::kHermes);
  for (const char* text : {"<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}",  // never closed
                           "<tool_call>not json</tool_call>",
                           "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>",  // not offered
                           "<tool_call>{\"arguments\": {}}</tool_call>",
                           "<tool_call>{\"name\": \"get_time\", \"arguments\": \"{}\"}</tool_call>"}) {
    const ToolReply whole = parse_tool_reply(ctx, text);
    EXPECT_EQ(whole.content, text);
    EXPECT_TRUE(whole.calls.empty());
    EXPECT_TRUE(whole.unparsed) << text;
    for (std::size_t cut = 0; cut <= std::string_view(text).size(); ++cut) {
      const ToolReply s = streamed(ctx, text, cut);
      EXPECT_EQ(s.content, text) << "cut at " << cut;
      EXPECT_TRUE(s.calls.empty());
      EXPECT_TRUE(s.unparsed);
    }
  }
}

TEST(ToolCallParser, Llama3AndGenericAreTheWholeReply) {
  expect_reply(context(ToolCallFormat::kLlama3), R"( {"name": "get_weather", "parameters": {"city": "Rome"}})", "",
               {{"call_x_0", "get_weather", R"({"city":"Rome"})"}});
  expect_reply(context(ToolCallFormat::kGeneric), R"({"name": "get_time", "arguments": {"zone": "UTC"}})", "",
               {{"call_x_0", "get_time", R"({"zone":"UTC"})"}});
  // Text is text, even when it holds JSON later on.
  expect_reply(context(ToolCallFormat::kGeneric), R"(Sure: {"name": "get_time", "arguments": {}})",
               R"(Sure: {"name": "get_time", "arguments": {}})", {});
  // A reply that opens with "{" but is no call: text, marked unparsed.
  const ToolReply r = parse_tool_reply(context(ToolCallFormat::kGeneric), R"({"answer": 42})");
  EXPECT_EQ(r.content, R"({"answer": 42})");
  EXPECT_TRUE(r.calls.empty());
  EXPECT_TRUE(r.unparsed);
}

TEST(ToolCallParser, Names) {
  EXPECT_EQ(tool_call_format_name(ToolCallFormat::kHermes), "hermes");
  EXPECT_EQ(tool_call_format_name(ToolCallFormat::kUnread), "unread");
}

}  // namespace
}  // namespace kvgate::openai
