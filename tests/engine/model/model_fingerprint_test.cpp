// The model fingerprint: what a cached block's K/V was computed with. Every
// disk-tier entry is keyed by it, so its value is pinned: a change to what
// is hashed must be deliberate (bump the tag), never a silent drift that
// turns every stored block into a miss.
#include "engine/model/model_fingerprint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/engine/test_models.h"

namespace kvgate {
namespace {

using kvgate::testing::stories;
using kvgate::testing::synthetic;

std::string hex(const cache::Hash128& h) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.hi),
                static_cast<unsigned long long>(h.lo));
  return buf;
}

const KvLayout kF32{KvType::kF32};

TEST(ModelFingerprint, SameFileSameFingerprint) {
  auto a = Model::load(kvgate::testing::shared_path("models/stories260K.gguf"));
  auto b = Model::load(kvgate::testing::shared_path("models/stories260K.gguf"));
  EXPECT_EQ(model_fingerprint(*a, kF32), model_fingerprint(*b, kF32));
}

TEST(ModelFingerprint, DifferentWeightsDifferentFingerprint) {
  EXPECT_NE(model_fingerprint(*synthetic(1), kF32), model_fingerprint(*synthetic(2), kF32));
  EXPECT_EQ(model_fingerprint(*synthetic(3), kF32), model_fingerprint(*synthetic(3), kF32));
  EXPECT_NE(model_fingerprint(*synthetic(1), kF32), model_fingerprint(*stories(), kF32));
}

TEST(ModelFingerprint, KvElementTypeAndLayoutArePartOfIt) {
  const cache::Hash128 w = weights_fingerprint(*stories());
  EXPECT_NE(model_fingerprint(w, {KvType::kF32}), model_fingerprint(w, {KvType::kF16}));
  EXPECT_NE(model_fingerprint(w, {KvType::kF16}), model_fingerprint(w, {KvType::kBF16}));
  EXPECT_NE(model_fingerprint(w, {KvType::kF32, "another-layout.v1"}), model_fingerprint(w, {KvType::kF32}));
  EXPECT_EQ(model_fingerprint(*stories(), kF32), model_fingerprint(w, kF32));
}

// The values for the shared stories260K file. If this fails, every disk
// tier written by an earlier build no longer hits: bump the tag on purpose.
TEST(ModelFingerprint, PinnedForStories260K) {
  EXPECT_EQ(hex(weights_fingerprint(*stories())), "99e2bba221e44d1cda15902581cbaa59");
  EXPECT_EQ(hex(model_fingerprint(*stories(), kF32)), "ace3ec81f655d58417af5aae9f0b6932");
}

}  // namespace
}  // namespace kvgate
