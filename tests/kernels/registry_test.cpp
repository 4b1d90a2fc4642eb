// How the registry chooses (--backend auto|cpu|cuda) in a build with the
// CUDA backend. These run with or without a device: without one, `cuda` is
// a clear error and `auto` is the CPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "kernels/cuda_backend.h"
#include "tests/engine/test_models.h"

namespace kvgate {
namespace {

TEST(CudaRegistry, TheBuildHasBothBackends) {
  const auto names = built_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
}

TEST(CudaRegistry, AutoPicksCudaExactlyWhenADeviceIsPresent) {
  auto be = make_backend("auto", testing::stories(), {});
  EXPECT_EQ(be->name(), cuda_device_count() > 0 ? "cuda" : "cpu");
}

TEST(CudaRegistry, CudaWithoutADeviceIsAClearError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    make_backend("cuda", testing::stories(), {});
    FAIL() << "expected kvgate::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--backend cpu"), std::string::npos) << e.what();
  }
}

// Both backends keep K/V in f32, f16 or bf16 (issue 16 gave the CPU the
// half types): the registry passes the requested type through either way.
TEST(CudaRegistry, EitherBackendKeepsTheRequestedKvType) {
  for (KvType t : {KvType::kF16, KvType::kBF16}) {
    BackendOptions opt;
    opt.kv_type = t;
    EXPECT_EQ(make_backend("cpu", testing::stories(), opt)->kv_layout().type, t);
    EXPECT_EQ(make_backend("auto", testing::stories(), opt)->kv_layout().type, t);
  }
}

}  // namespace
}  // namespace kvgate
