// RedisSeal: AES-256-GCM bound to the key name, rotation by key id, keyed
// tags, and the key file's checks.
#include "cache/tiers/redis_seal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/temp_dir.h"

namespace kvgate::cache {
namespace {

SealKey filled(uint8_t v) {
  SealKey k;
  k.fill(v);
  return k;
}

RedisKeys ring(std::vector<std::pair<uint32_t, uint8_t>> keys) {
  RedisKeys r;
  r.names = filled(1);
  for (const auto& [id, v] : keys) r.keys.emplace_back(id, filled(v));
  return r;
}

std::vector<std::byte> bytes(std::string_view s) {
  const auto* b = reinterpret_cast<const std::byte*>(s.data());
  return {b, b + s.size()};
}

TEST(RedisSeal, OpensWhatItSealedForThatNameOnly) {
  const RedisSeal seal(ring({{1, 10}}));
  const std::vector<std::byte> record = bytes("a block record's bytes");
  const std::vector<std::byte> v = seal.seal(record, "kvgate:kv:2:a:b");
  EXPECT_EQ(v.size(), record.size() + RedisSeal::kOverheadBytes);
  EXPECT_EQ(seal.open(v, "kvgate:kv:2:a:b"), record);
  EXPECT_NE(seal.seal(record, "kvgate:kv:2:a:b"), v) << "a fresh nonce each time";
  EXPECT_FALSE(seal.open(v, "kvgate:kv:2:a:c")) << "moved under another name";
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<std::byte> bad = v;
    bad[i] ^= std::byte{0x01};
    EXPECT_FALSE(seal.open(bad, "kvgate:kv:2:a:b")) << "byte " << i;
  }
  EXPECT_FALSE(seal.open(std::span(v).first(v.size() - 1), "kvgate:kv:2:a:b"));
  EXPECT_FALSE(seal.open(record, "kvgate:kv:2:a:b")) << "a plain record is no sealed one";
}

TEST(RedisSeal, ARotatedRingSealsWithItsFirstKeyAndOpensWithEveryKeyItHolds) {
  const RedisSeal old_ring(ring({{1, 10}}));
  const RedisSeal rotating(ring({{2, 20}, {1, 10}}));
  const RedisSeal rotated(ring({{2, 20}}));
  const std::vector<std::byte> record = bytes("record");
  const std::vector<std::byte> under_1 = old_ring.seal(record, "n");
  const std::vector<std::byte> under_2 = rotating.seal(record, "n");
  EXPECT_EQ(rotating.open(under_1, "n"), record);
  EXPECT_EQ(rotated.open(under_2, "n"), record);
  EXPECT_FALSE(rotated.open(under_1, "n")) << "key 1 is no longer held";
  EXPECT_FALSE(old_ring.open(under_2, "n")) << "key 2 is not held yet";
  RedisKeys same_id = ring({{1, 99}});
  EXPECT_FALSE(RedisSeal(same_id).open(under_1, "n")) << "another key under the same id";
}

TEST(RedisSeal, TagsAreKeyedByTheNamesKey) {
  const RedisSeal a(ring({{1, 10}}));
  RedisKeys other = ring({{1, 10}});
  other.names = filled(2);
  const std::vector<std::byte> data = bytes("scope and hash");
  EXPECT_EQ(a.tag(data), a.tag(data));
  EXPECT_NE(a.tag(data), RedisSeal(other).tag(data));
  EXPECT_EQ(a.tag(data), RedisSeal(ring({{7, 70}})).tag(data)) << "rotating the record key keeps every name";
}

TEST(RedisSealKeyFile, IsReadAndEveryMistakeIsNamed) {
  kvgate::testing::TempDir dir;
  const auto write = [&](const std::string& text, mode_t mode = 0600) {
    const std::string path = dir.sub("keys");
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  };
  const std::string k64(64, 'a'), n64(64, 'b');
  const RedisKeys k = read_redis_keys(write("# cluster key\nnames " + n64 + "\nkey 2 " + k64 + "\nkey 1 " + n64 + "\n"));
  ASSERT_EQ(k.keys.size(), 2u);
  EXPECT_EQ(k.keys[0].first, 2u) << "the first key line seals";
  EXPECT_EQ(k.names, filled(0xbb));
  const auto error = [&](const std::string& text, mode_t mode = 0600) {
    try {
      read_redis_keys(write(text, mode));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error("names " + n64 + "\nkey 1 " + k64 + "\n", 0644).find("chmod 600"), std::string::npos);
  EXPECT_NE(error("key 1 " + k64 + "\n").find("no \"names"), std::string::npos);
  EXPECT_NE(error("names " + n64 + "\n").find("no \"key"), std::string::npos);
  EXPECT_NE(error("names " + n64 + "\nkey 1 " + k64.substr(1) + "\n").find("keys:2: expected \"key <id>"),
            std::string::npos);
  EXPECT_NE(error("names " + n64 + "\nkey 1 " + k64 + "\nkey 1 " + n64 + "\n").find("key id 1 appears twice"),
            std::string::npos);
  EXPECT_NE(error("names " + n64 + "\nsecret " + k64 + "\n").find("keys:2: expected"), std::string::npos);
}

}  // namespace
}  // namespace kvgate::cache
