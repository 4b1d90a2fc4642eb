#include <gtest/gtest.h>

#include "engine/model_fingerprint.h"
#include "tests/engine/prefix_support.h"

namespace kvgate {
namespace {

using namespace kvgate::prefix_testing;

TEST(PrefixFingerprint, SameFileSameFingerprint) {
  auto a = Model::load(kvgate::testing::shared_path("models/stories260K.gguf"));
  auto b = Model::load(kvgate::testing::shared_path("models/stories260K.gguf"));
  EXPECT_EQ(model_fingerprint(*a), model_fingerprint(*b));
}

TEST(PrefixFingerprint, DifferentWeightsDifferentFingerprint) {
  EXPECT_NE(model_fingerprint(*synthetic(1)), model_fingerprint(*synthetic(2)));
  EXPECT_EQ(model_fingerprint(*synthetic(3)), model_fingerprint(*synthetic(3)));
  EXPECT_NE(model_fingerprint(*synthetic(1)), model_fingerprint(*stories()));
}

}  // namespace
}  // namespace kvgate
