// kernels/cublas_lazy.cpp: cuBLAS is loaded on first use, not at start, and
// its functions are found there. No device needed (loading libcublas and
// naming a status do not touch one), so unlike the rest of this suite these
// run, and check the lazy loading, on every machine with the toolkit.
#include <cublas_v2.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

namespace {

// dlopen with RTLD_NOLOAD: whether the library is in the process already.
bool loaded(const char* soname) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

TEST(CublasLazy, NotLoadedAtStartLoadedOnFirstCall) {
  const std::string major = std::to_string(CUBLAS_VER_MAJOR);
  const std::string cublas = "libcublas.so." + major, lt = "libcublasLt.so." + major;
  // ctest runs each test in its own process: nothing has called cuBLAS yet.
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 1) {
    EXPECT_FALSE(loaded(cublas.c_str()));
    EXPECT_FALSE(loaded(lt.c_str()));
  }
  // cuBLAS 13 says "the library was not initialized": some text, from the library.
  const char* said = cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED);
  ASSERT_NE(said, nullptr);
  EXPECT_NE(std::string(said), "");
  EXPECT_TRUE(loaded(cublas.c_str()));
  EXPECT_TRUE(loaded(lt.c_str()));
}

}  // namespace
