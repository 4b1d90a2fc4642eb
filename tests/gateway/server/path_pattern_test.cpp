#include "gateway/server/path_pattern.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace kvgate::server {
namespace {

using Params = std::vector<std::string_view>;

bool match(const PathPattern& pattern, std::string_view path, Params& params) {
  return pattern.match(path_segments(path), params);
}

TEST(PathPattern, LiteralSegmentsMatchThemselvesOnly) {
  Params p;
  const PathPattern tenants = "/admin/tenants";
  EXPECT_TRUE(match(tenants, "/admin/tenants", p));
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(match(tenants, "/admin/tenant", p));
  EXPECT_FALSE(match(tenants, "/admin/tenants/acme", p));
  EXPECT_FALSE(match("/admin/tenants/{id}", "/admin/tenants", p));
}

TEST(PathPattern, EachBraceSegmentTakesOneSegmentInOrder) {
  Params p;
  const PathPattern rotate = "/admin/tenants/{id}/keys/{key_id}/rotate";
  ASSERT_TRUE(match(rotate, "/admin/tenants/acme/keys/k_1/rotate", p));
  EXPECT_EQ(p, (Params{"acme", "k_1"}));
  EXPECT_FALSE(match(rotate, "/admin/tenants/acme/keys/k_1/revoke", p));
}

TEST(PathPattern, EmptySegmentsAreIgnoredAsMostServersReadThem) {
  Params p;
  ASSERT_TRUE(match("/admin/plans/{id}", "//admin//plans/pro/", p));
  EXPECT_EQ(p, (Params{"pro"}));
  EXPECT_EQ(path_segments("/a//b/"), (Params{"a", "b"}));
  EXPECT_TRUE(path_segments("/").empty());
}

// A pattern is split once and matched many times, each time from scratch.
TEST(PathPattern, OnePatternMatchesManyPaths) {
  Params p;
  const PathPattern plan = "/admin/plans/{id}";
  ASSERT_TRUE(match(plan, "/admin/plans/pro", p));
  EXPECT_EQ(p, (Params{"pro"}));
  ASSERT_TRUE(match(plan, "/admin/plans/free", p));
  EXPECT_EQ(p, (Params{"free"}));
  EXPECT_FALSE(match(plan, "/admin/plans", p));
}

}  // namespace
}  // namespace kvgate::server
