// What running kvgate from the checkout writes stays out of `git status`:
// the server's default data directory (ops/run starts it there), which a
// newcomer found untracked in the repository after a first start.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gateway/config/server_config.h"

namespace kvgate {
namespace {

int git(const std::string& args) {
  return std::system(("git -C '" KVGATE_SOURCE_DIR "' " + args + " >/dev/null 2>&1").c_str());
}

TEST(IgnoredOutputs, TheDefaultDataDirectoryIsIgnored) {
  if (git("rev-parse --git-dir") != 0) GTEST_SKIP() << "not a git checkout";
  const std::string dir = config::ServerConfig{}.data.dir;
  EXPECT_EQ(git("check-ignore -q --no-index '" + dir + "/tenancy/CURRENT'"), 0) << dir << " is not in .gitignore";
  EXPECT_NE(git("check-ignore -q --no-index 'engine/model/gguf.cpp'"), 0);  // and the check can fail
}

}  // namespace
}  // namespace kvgate
