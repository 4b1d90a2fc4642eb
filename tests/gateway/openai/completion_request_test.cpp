// POST /v1/completions bodies: each prompt form, one prompt per request,
// the fields kvgate takes only at their defaults, and vocabulary bounds.
#include "gateway/openai/completion_request.h"

#include <gtest/gtest.h>

#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::openai {
namespace {

using testing::error_of;

std::string body(const std::string& prompt, const std::string& extra = "") {
  return R"({"model": "m", "prompt": )" + prompt + (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(CompletionRequest, PromptForms) {
  EXPECT_EQ(parse_completion_request(body(R"("Once upon")")).prompt, CompletionPrompt(std::string("Once upon")));
  EXPECT_EQ(parse_completion_request(body(R"("")")).prompt, CompletionPrompt(std::string()));
  EXPECT_EQ(parse_completion_request(body(R"(["Once"])")).prompt, CompletionPrompt(std::string("Once")));
  EXPECT_EQ(parse_completion_request(body("[1, 2, 3]")).prompt, CompletionPrompt(Tokens{1, 2, 3}));
  EXPECT_EQ(parse_completion_request(body("[[4, 5]]")).prompt, CompletionPrompt(Tokens{4, 5}));
  EXPECT_EQ(parse_completion_request(body("[0, 2147483647, 7.0]")).prompt, CompletionPrompt(Tokens{0, 2147483647, 7}));
}

TEST(CompletionRequest, SharedFieldsAndDefaults) {
  const CompletionRequest r = parse_completion_request(
      body(R"("hi")", R"("max_tokens": 3, "temperature": 0, "stop": "x", "stream": true,
             "stream_options": {"include_usage": true}, "echo": false, "logprobs": null, "suffix": null,
             "best_of": 1, "n": 1, "cache_salt": "s", "max_completion_tokens": 99)"));
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.options.max_tokens, 3);  // max_completion_tokens is a chat field: ignored here
  EXPECT_EQ(r.options.temperature, 0.0f);
  EXPECT_EQ(r.options.stop, (std::vector<std::string>{"x"}));
  EXPECT_TRUE(r.options.stream);
  EXPECT_TRUE(r.options.include_usage);
  EXPECT_EQ(r.options.cache_salt, "s");
  EXPECT_EQ(parse_completion_request(body(R"("hi")", R"("suffix": "")")).options, GenerationOptions{});
}

TEST(CompletionRequest, SeveralPromptsAreOnePerRequest) {
  for (const char* p : {R"(["a", "b"])", "[[1], [2]]", R"(["a", "b", "c"])"}) {
    SCOPED_TRACE(p);
    const ApiError e = error_of([&] { parse_completion_request(body(p)); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "prompt");
    EXPECT_EQ(e.code, "invalid_value");
    EXPECT_NE(e.message.find("only one prompt per request"), std::string::npos) << e.message;
  }
}

TEST(CompletionRequest, RefusalsNameTheField) {
  struct Case {
    std::string body;
    std::string param;
    std::string code;
  };
  const Case cases[] = {
      {R"({"prompt": "x"})", "model", "missing_required_parameter"},
      {R"({"model": "m"})", "prompt", "missing_required_parameter"},
      {R"({"model": "m", "prompt": null})", "prompt", "missing_required_parameter"},
      {body("5"), "prompt", "invalid_type"},
      {body("{}"), "prompt", "invalid_type"},
      {body("[]"), "prompt", "empty_array"},
      {body("[[]]"), "prompt[0]", "empty_array"},
      {body("[1, \"a\"]"), "prompt[1]", "invalid_type"},
      {body("[1, 2.5]"), "prompt[1]", "invalid_type"},
      {body("[1, -1]"), "prompt[1]", "invalid_value"},
      {body("[2147483648]"), "prompt[0]", "invalid_value"},
      {body("[\"a\", 1]"), "prompt[1]", "invalid_type"},
      {body("[[1], \"a\"]"), "prompt[1]", "invalid_type"},
      {body("[[\"a\"]]"), "prompt[0][0]", "invalid_type"},
      {body("[[1, \"a\"]]"), "prompt[0][1]", "invalid_type"},
      {body("[true]"), "prompt[0]", "invalid_type"},
      {body("\"x\"", R"("echo": true)"), "echo", "invalid_value"},
      {body("\"x\"", R"("echo": "no")"), "echo", "invalid_type"},
      {body("\"x\"", R"("logprobs": 0)"), "logprobs", "invalid_value"},
      {body("\"x\"", R"("logprobs": 5)"), "logprobs", "invalid_value"},
      {body("\"x\"", R"("logprobs": true)"), "logprobs", "invalid_type"},
      {body("\"x\"", R"("suffix": "tail")"), "suffix", "invalid_value"},
      {body("\"x\"", R"("suffix": 1)"), "suffix", "invalid_type"},
      {body("\"x\"", R"("best_of": 2)"), "best_of", "invalid_value"},
      {body("\"x\"", R"("n": 3)"), "n", "invalid_value"},
      {body("\"x\"", R"("max_tokens": 0)"), "max_tokens", "invalid_value"},
      {body("\"x\"", R"("temperature": 3)"), "temperature", "invalid_value"},
      {body("\"x\"", R"("stream_options": {"include_usage": true})"), "stream_options", "invalid_value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = error_of([&] { parse_completion_request(c.body); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, c.param) << e.message;
    EXPECT_EQ(e.code, c.code) << e.message;
  }
}

TEST(CompletionRequest, TokenIdsOutsideTheVocabularyNameTheirIndex) {
  EXPECT_NO_THROW(check_prompt_tokens({0, 1, 511}, 512));
  const ApiError e = error_of([] { check_prompt_tokens({1, 512, 3}, 512); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "prompt[1]");
  EXPECT_NE(e.message.find("512"), std::string::npos);
}

}  // namespace
}  // namespace kvgate::openai
