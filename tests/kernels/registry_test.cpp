// How the registry chooses (--backend auto|cpu|cuda) in a build with the
// CUDA backend. These run with or without a device: without one, `cuda` is
// a clear error and `auto` is the CPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "engine/backend_registry.h"
#include "base/error.h"
#include "kernels/cuda_backend.h"
#include "engine/model/synthetic_model.h"
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

// A small synthetic Llama in Q4_K_M, llama.cpp's mixture (Q4_K matrices,
// some attn_v / ffn_down and the output Q6_K), unlinked once mapped.
std::shared_ptr<const Model> q4_k_m() {
  SyntheticModelSpec s;
  s.layers = 2, s.dim = 256, s.heads = 4, s.kv_heads = 2, s.ffn = 512, s.context = 256, s.seed = 3;
  s.type = TensorType::Q4_K, s.k_quant_medium = true;
  s.vocab_from = testing::shared_path("testdata/ggml-vocab-llama-spm.gguf");
  const auto path = std::filesystem::temp_directory_path() / ("kvgate-registry-" + std::to_string(::getpid()) + ".gguf");
  write_synthetic_model(s, path.string());
  auto m = Model::load(path.string());
  std::filesystem::remove(path);
  return m;
}

// The CUDA backend reads every type the CPU does: the registry lets a
// k-quant model through to it (which, with no device, then reports that),
// rather than refusing the weights' type (what it did before the CUDA
// kernels read them).
TEST(CudaRegistry, KQuantWeightsReachTheCudaBackend) {
  auto model = q4_k_m();
  ASSERT_EQ(model->weights().layers.at(0).wq.type, TensorType::Q4_K);
  ASSERT_EQ(model->weights().layers.at(1).wv.type, TensorType::Q6_K);  // the mixture: fused Q/K/V of two types
  if (cuda_device_count() > 0) {
    EXPECT_EQ(make_backend("cuda", model, {})->name(), "cuda");
    return;
  }
  try {
    make_backend("cuda", model, {});
    FAIL() << "expected kvgate::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("does not read"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_backend("auto", model, {})->name(), "cpu");
}

}  // namespace
}  // namespace kvgate
