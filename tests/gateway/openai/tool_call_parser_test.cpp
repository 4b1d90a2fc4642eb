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
    EXPECT_EQ(s.unparsed, unparsed) << text << " cut at " << cut;
    if (calls.empty()) {
      EXPECT_EQ(s.content, content) << "cut at " << cut;
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

TEST(ToolCallParser, Llama3AfterItsPythonTag) {
  const ToolCallContext ctx = context(ToolCallFormat::kLlama3);
  expect_reply(ctx, R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Rome"}})", "",
               {{"call_x_0", "get_weather", R"({"city":"Rome"})"}});
  // Llama's built-in tools are not JSON: text, and the tag never shows.
  expect_reply(ctx, R"(<|python_tag|>brave_search.call(query="Rome"))", R"(brave_search.call(query="Rome"))", {}, true);
  expect_reply(ctx, "Sure. <|python_tag|>", "Sure. ", {});
}

// Mistral's ids are 9 alphanumeric characters (its templates raise on any other
// when the call comes back): the request's hex, then the call's number.
TEST(ToolCallParser, MistralIdsAreNineAlphanumerics) {
  ToolCallContext ctx = context(ToolCallFormat::kMistral);
  ctx.id_prefix = "call_0123456789abcdef01234567_";
  EXPECT_EQ(tool_call_id(ctx, 0), "123456700");
  EXPECT_EQ(tool_call_id(ctx, 37), "123456711");
  EXPECT_EQ(tool_call_id(context(ToolCallFormat::kMistral), 2), "00callx02");
  EXPECT_EQ(tool_call_id(context(ToolCallFormat::kHermes), 2), "call_x_2");
}

TEST(ToolCallParser, Mistral) {
  const ToolCallContext ctx = context(ToolCallFormat::kMistral);
  // Devstral, Ministral 3, Magistral: [TOOL_CALLS]name[ARGS]{...}, once per call.
  expect_reply(ctx, R"([TOOL_CALLS]get_weather[ARGS]{"city": "Paris"})", "",
               {{"00callx00", "get_weather", R"({"city":"Paris"})"}});
  expect_reply(ctx, R"(Let me look.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{})",
               "Let me look.",
               {{"00callx00", "get_weather", R"({"city":"Paris"})"}, {"00callx01", "get_time", "{}"}});
  // Small 3.2 writes the call's id too; ours replaces it.
  expect_reply(ctx, R"([TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{"zone": "UTC"})", "",
               {{"00callx00", "get_time", R"({"zone":"UTC"})"}});
  // Nemo: one JSON array of calls.
  expect_reply(ctx,
               R"(Checking. [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdefghi"},)"
               R"( {"name": "get_time", "arguments": {}}])",
               "Checking.",
               {{"00callx00", "get_weather", R"({"city":"Paris"})"}, {"00callx01", "get_time", "{}"}});
  expect_reply(ctx, "Brackets [like these] and [TOOL_CALL are text.", "Brackets [like these] and [TOOL_CALL are text.", {});
}

TEST(ToolCallParser, MistralThatIsNotACallIsTextWithoutItsMarkers) {
  const ToolCallContext ctx = context(ToolCallFormat::kMistral);
  expect_reply(ctx, R"([TOOL_CALLS]get_weather[ARGS]{"city": )", R"(get_weather{"city": )", {}, true);
  expect_reply(ctx, R"(Sure.[TOOL_CALLS]rm_rf[ARGS]{})", "Sure.rm_rf{}", {}, true);  // not offered
  expect_reply(ctx, R"([TOOL_CALLS]get_time{})", "get_time{}", {}, true);
  expect_reply(ctx, R"([TOOL_CALLS][{"name": "get_time"}])", R"([{"name": "get_time"}])", {}, true);
  expect_reply(ctx, "[TOOL_CALLS]", "", {}, true);
}

constexpr std::string_view kBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kEnd = "<｜tool▁calls▁end｜>";

std::string deepseek_v3(std::string_view name, std::string_view args) {
  return "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + std::string(name) + "\n```json\n" + std::string(args) +
         "\n```<｜tool▁call▁end｜>";
}

TEST(ToolCallParser, DeepSeek) {
  const ToolCallContext ctx = context(ToolCallFormat::kDeepSeek);
  // V3, R1: function<｜tool▁sep｜>name, the arguments fenced as JSON.
  expect_reply(ctx, std::string(kBegin) + deepseek_v3("get_weather", R"({"city": "Paris"})") + std::string(kEnd), "",
               {{"call_x_0", "get_weather", R"({"city":"Paris"})"}});
  expect_reply(ctx,
               "Let me look." + std::string(kBegin) + deepseek_v3("get_weather", R"({"city": "Paris"})") + "\n" +
                   deepseek_v3("get_time", "{}") + std::string(kEnd),
               "Let me look.",
               {{"call_x_0", "get_weather", R"({"city":"Paris"})"}, {"call_x_1", "get_time", "{}"}});
  // V3.1: name<｜tool▁sep｜>{...}.
  expect_reply(ctx,
               std::string(kBegin) + R"(<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"zone": "UTC"}<｜tool▁call▁end｜>)" +
                   R"(<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}<｜tool▁call▁end｜>)" + std::string(kEnd),
               "", {{"call_x_0", "get_time", R"({"zone":"UTC"})"}, {"call_x_1", "get_weather", "{}"}});
  // R1 at times leaves out the calls' opening marker, or adds words after them.
  expect_reply(ctx, deepseek_v3("get_time", "{}") + std::string(kEnd) + " Done.", "Done.",
               {{"call_x_0", "get_time", "{}"}});
  expect_reply(ctx, "No tools: <｜tool and <| are text.", "No tools: <｜tool and <| are text.", {});
}

TEST(ToolCallParser, DeepSeekThatIsNotACallIsTextWithoutItsMarkers) {
  const ToolCallContext ctx = context(ToolCallFormat::kDeepSeek);
  const std::string never_closed = std::string(kBegin) + "<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}";
  expect_reply(ctx, never_closed, "get_time{}", {}, true);
  expect_reply(ctx, std::string(kBegin) + deepseek_v3("rm_rf", "{}") + std::string(kEnd),
               "function" + std::string("rm_rf\n```json\n{}\n```"), {}, true);
  expect_reply(ctx, std::string(kBegin) + deepseek_v3("get_time", "{oops") + std::string(kEnd),
               "functionget_time\n```json\n{oops\n```", {}, true);
  expect_reply(ctx, std::string(kBegin) + "chatter" + deepseek_v3("get_time", "{}") + std::string(kEnd),
               "chatterfunctionget_time\n```json\n{}\n```", {}, true);
}

TEST(ToolCallParser, Names) {
  EXPECT_EQ(tool_call_format_name(ToolCallFormat::kHermes), "hermes");
  EXPECT_EQ(tool_call_format_name(ToolCallFormat::kUnread), "unread");
  for (ToolCallFormat f : {ToolCallFormat::kHermes, ToolCallFormat::kLlama3, ToolCallFormat::kMistral,
                           ToolCallFormat::kDeepSeek, ToolCallFormat::kGeneric})
    EXPECT_EQ(tool_call_format_named(tool_call_format_name(f)), f);
  EXPECT_EQ(tool_call_format_named("unread"), std::nullopt);
  EXPECT_EQ(tool_call_format_named("Hermes"), std::nullopt);
  EXPECT_EQ(tool_call_format_named("auto"), std::nullopt);
}

}  // namespace
}  // namespace kvgate::openai
