// The generation budget: exactly max_tokens when it fits, what the context
// leaves when none is named, and OpenAI's 400 when it does not fit.
#include "gateway/openai/context_budget.h"

#include <gtest/gtest.h>

#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::openai {
namespace {

using testing::error_of;

TEST(ContextBudget, MaxTokensThatFitAreKept) {
  EXPECT_EQ(completion_budget(16, 100, 512, Endpoint::kChatCompletions), 16);
  EXPECT_EQ(completion_budget(412, 100, 512, Endpoint::kCompletions), 412);  // exactly full
}

TEST(ContextBudget, NoMaxTokensTakesWhatTheContextLeaves) {
  EXPECT_EQ(completion_budget(std::nullopt, 100, 512, Endpoint::kChatCompletions), 412);
  EXPECT_EQ(completion_budget(std::nullopt, 511, 512, Endpoint::kCompletions), 1);
  EXPECT_EQ(completion_budget(std::nullopt, 0, int64_t{1} << 40, Endpoint::kCompletions), INT32_MAX);
}

TEST(ContextBudget, TooMuchIsOpenAisContextLengthError) {
  const ApiError e = error_of([] { completion_budget(413, 100, 512, Endpoint::kChatCompletions); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "context_length_exceeded");
  EXPECT_EQ(e.param, "messages");
  EXPECT_EQ(e.message,
            "This model's maximum context length is 512 tokens. However, you requested 513 tokens (100 in the "
            "messages, 413 in the completion). Please reduce the length of the messages or completion.");
  const ApiError p = error_of([] { completion_budget(1, 600, 512, Endpoint::kCompletions); });
  EXPECT_EQ(p.param, "prompt");
  EXPECT_NE(p.message.find("600 in the prompt"), std::string::npos) << p.message;
}

TEST(ContextBudget, APromptThatFillsTheContextIsRefusedEvenWithoutMaxTokens) {
  EXPECT_EQ(error_of([] { completion_budget(std::nullopt, 512, 512, Endpoint::kCompletions); }).code,
            "context_length_exceeded");
  EXPECT_EQ(error_of([] { completion_budget(std::nullopt, 900, 512, Endpoint::kChatCompletions); }).code,
            "context_length_exceeded");
}

}  // namespace
}  // namespace kvgate::openai
