#include "engine/sched/token_limit.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace kvgate {
namespace {

TEST(TokenLimit, EosStopsAndTheLimitEndsWithLength) {
  TokenLimit t(3, {2});
  EXPECT_EQ(t.on_token(10), std::nullopt);
  EXPECT_EQ(t.on_token(2), FinishReason::kStop);
  TokenLimit l(3, {2, 7});
  EXPECT_EQ(l.on_token(5), std::nullopt);
  EXPECT_EQ(l.on_token(5), std::nullopt);
  EXPECT_EQ(l.on_token(5), FinishReason::kLength);
  EXPECT_EQ(l.generated(), 3);
  // EOS as the last allowed token is a natural stop.
  TokenLimit e(1, {2, 7});
  EXPECT_EQ(e.on_token(7), FinishReason::kStop);
  EXPECT_EQ(finish_reason_name(FinishReason::kStop), "stop");
  EXPECT_EQ(finish_reason_name(FinishReason::kLength), "length");
}

TEST(TokenLimit, MaxTokensMustBePositive) {
  try {
    TokenLimit t(0, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvgate
