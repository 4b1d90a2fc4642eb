// The first start's secrets written to a file instead of stdout: made
// before any secret exists, mode 0600, never over an existing file, shell
// that sets the two variables; and when a start makes secrets at all (the
// first, or one after the admin token file was deleted).
#include "gateway/serving/secrets_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "base/error.h"
#include "gateway/serving/admin_token.h"
#include "gateway/serving/bootstrap.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

using kvgate::testing::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

TEST(SecretsFile, HoldsTheSecretsMadeInAFileOnlyItsOwnerReads) {
  TempDir dir;
  const std::string path = dir.sub("first-start");
  SecretsFile file = SecretsFile::create(path);
  tenancy::Tenancy t(dir.sub("store"));
  const FirstStartSecrets s = bootstrap(t, dir.sub("admin-token"));
  ASSERT_TRUE(s.demo_key && s.admin_token);
  file.write(s);

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = read_all(path);
  EXPECT_NE(text.find("\nexport KVGATE_API_KEY=" + *s.demo_key + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nexport KVGATE_ADMIN_TOKEN=" + *s.admin_token + "\n"), std::string::npos) << text;
  // Sourced by a shell, it sets both, as the guide says.
  const std::string out = dir.sub("sourced");
  const std::string cmd = ". '" + path + "' && printf '%s %s' \"$KVGATE_API_KEY\" \"$KVGATE_ADMIN_TOKEN\" > '" + out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;  // std::system runs /bin/sh
  EXPECT_EQ(read_all(out), *s.demo_key + " " + *s.admin_token);
}

TEST(SecretsFile, AnExistingFileIsNeverOverwritten) {
  TempDir dir;
  const std::string path = dir.sub("first-start");
  std::ofstream(path) << "the secrets of an earlier first start\n";
  try {
    SecretsFile::create(path);
    FAIL() << "opened an existing file";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("refusing to overwrite"), std::string::npos) << msg;
  }
  EXPECT_EQ(read_all(path), "the secrets of an earlier first start\n");
  EXPECT_THROW(SecretsFile::create(dir.sub("no/such/dir/file")), Error);
}

// Only the secrets made are written: after the admin token file is deleted
// (a lost token), the next start makes a token and nothing else.
TEST(SecretsFile, AStartMakesSecretsOnlyOnAnEmptyStoreOrWithoutATokenFile) {
  TempDir dir;
  tenancy::Tenancy t(dir.sub("store"));
  const std::string token_file = dir.sub("admin-token");
  EXPECT_TRUE(secrets_pending(t, token_file));
  (void)bootstrap(t, token_file);
  EXPECT_FALSE(secrets_pending(t, token_file));

  std::remove(token_file.c_str());
  EXPECT_TRUE(secrets_pending(t, token_file));
  const FirstStartSecrets s = bootstrap(t, token_file);
  EXPECT_FALSE(s.demo_key) << "the demo tenant is made once, on an empty store";
  ASSERT_TRUE(s.admin_token);
  const std::string text = SecretsFile::text(s);
  EXPECT_EQ(text.find("KVGATE_API_KEY"), std::string::npos) << text;
  EXPECT_NE(text.find("export KVGATE_ADMIN_TOKEN=" + *s.admin_token), std::string::npos) << text;
  EXPECT_TRUE(AdminToken::load(token_file)->matches(*s.admin_token));
}

}  // namespace
}  // namespace kvgate::serving
