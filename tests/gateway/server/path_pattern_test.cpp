#include "gateway/server/path_pattern.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace kvgate::server {
namespace {

using Params = std::vector<std::string_view>;

TEST(PathPattern, LiteralSegmentsMatchThemselvesOnly) {
  Params p;
  EXPECT_TRUE(match_path("/admin/tenants", "/admin/tenants", p));
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(match_path("/admin/tenants", "/admin/tenant", p));
  EXPECT_FALSE(match_path("/admin/tenants", "/admin/tenants/acme", p));
  EXPECT_FALSE(match_path("/admin/tenants/{id}", "/admin/tenants", p));
}

TEST(PathPattern, EachBraceSegmentTakesOneSegmentInOrder) {
  Params p;
  ASSERT_TRUE(match_path("/admin/tenants/{id}/keys/{key_id}/rotate", "/admin/tenants/acme/keys/k_1/rotate", p));
  EXPECT_EQ(p, (Params{"acme", "k_1"}));
  EXPECT_FALSE(match_path("/admin/tenants/{id}/keys/{key_id}/rotate", "/admin/tenants/acme/keys/k_1/revoke", p));
}

TEST(PathPattern, EmptySegmentsAreIgnoredAsMostServersReadThem) {
  Params p;
  ASSERT_TRUE(match_path("/admin/plans/{id}", "//admin//plans/pro/", p));
  EXPECT_EQ(p, (Params{"pro"}));
  EXPECT_EQ(path_segments("/a//b/"), (Params{"a", "b"}));
  EXPECT_TRUE(path_segments("/").empty());
}

}  // namespace
}  // namespace kvgate::server
