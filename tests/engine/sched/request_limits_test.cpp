// What a request may ask for: refused up front with a message that names the
// problem, never silently changed.
#include "engine/sched/request_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace kvgate {
namespace {

const RequestBounds kBounds{.context_length = 64, .vocab_size = 100, .block_size = 16, .pool_blocks = 8};

Request request(int32_t prompt_tokens, int32_t max_tokens) {
  Request r;
  r.prompt.assign(static_cast<size_t>(prompt_tokens), 5);
  r.max_tokens = max_tokens;
  r.scope = cache::ScopeId{1, 1};
  return r;
}

std::string error_of(const Request& r) {
  try {
    (void)request_limits(r, kBounds);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The OpenAI API answers 400 when max_tokens exceeds what the context has
// left; clamping it would bill and stream something the client did not ask.
TEST(RequestLimits, MaxTokensBeyondTheContextLeftIsRefusedNotClamped) {
  EXPECT_EQ(request_limits(request(40, 24), kBounds).max_tokens, 24);  // exactly the room left
  const std::string e = error_of(request(40, 25));
  EXPECT_NE(e.find("max_tokens is 25"), std::string::npos) << e;
  EXPECT_NE(e.find("room for 24"), std::string::npos) << e;
}

TEST(RequestLimits, ZeroMaxTokensMeansWhatTheContextHasRoomFor) {
  EXPECT_EQ(request_limits(request(40, 0), kBounds).max_tokens, 24);
}

TEST(RequestLimits, EachRefusalNamesItsCause) {
  Request no_scope = request(4, 4);
  no_scope.scope.reset();
  EXPECT_NE(error_of(no_scope).find("no cache scope"), std::string::npos);
  EXPECT_NE(error_of(request(0, 4)).find("empty"), std::string::npos);
  EXPECT_NE(error_of(request(64, 4)).find("context"), std::string::npos);
  EXPECT_NE(error_of(request(4, -1)).find("negative"), std::string::npos);
  Request bad_id = request(4, 4);
  bad_id.prompt[2] = 100;
  EXPECT_NE(error_of(bad_id).find("outside the vocabulary"), std::string::npos);
  Request bad_sampling = request(4, 4);
  bad_sampling.sampling.top_p = 0;
  EXPECT_NE(error_of(bad_sampling).find("top_p"), std::string::npos);
  const RequestBounds tiny{.context_length = 64, .vocab_size = 100, .block_size = 16, .pool_blocks = 2};
  EXPECT_THROW((void)request_limits(request(30, 10), tiny), Error);
}

}  // namespace
}  // namespace kvgate
