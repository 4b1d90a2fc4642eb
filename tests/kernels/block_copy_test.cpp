// Block copies: batched device <-> pinned host transfers on their own
// stream, the copy_blocks kernel, and the backend's single-block copies, all
// bit-exact round trips.
#include <cstring>
#include <numeric>
#include <random>

#include "kernels/block_copy.h"
#include "kernels/block_transfer.h"
#include "tests/engine/test_models.h"
#include "tests/kernels/cuda_test_support.h"
#include "engine/backend_registry.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

std::vector<std::byte> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

using CudaBlockCopy = CudaTest;

TEST_F(CudaBlockCopy, BatchedTransfersRoundTripBitExact) {
  const size_t block_bytes = 4096;
  const int32_t n_blocks = 32;
  cuda::DeviceBuffer pool(block_bytes * n_blocks, "pool");
  cuda::check(cudaMemset(pool.as(), 0, pool.bytes()), "memset");
  cuda::Stream compute;
  cuda::BlockTransfer transfer(pool.as<std::byte>(), block_bytes, n_blocks);
  // A run of consecutive ids (one copy), scattered ones, the last block.
  const std::vector<BlockId> ids{3, 4, 5, 6, 17, 0, 31, 9};
  const auto src = random_bytes(ids.size() * block_bytes, 1);
  cuda::PinnedBuffer in(src.size(), "in"), out(src.size(), "out");
  std::memcpy(in.as(), src.data(), src.size());
  transfer.from_host(ids, in.as<std::byte>(), compute.get());
  transfer.to_host(ids, out.as<std::byte>(), compute.get());
  transfer.wait();
  EXPECT_EQ(std::memcmp(out.as(), src.data(), src.size()), 0);
  // Blocks not named stay zero.
  std::vector<std::byte> all(pool.bytes());
  cuda::check(cudaMemcpy(all.data(), pool.as(), all.size(), cudaMemcpyDeviceToHost), "download");
  for (int32_t b : {1, 2, 7, 30})
    for (size_t i = 0; i < block_bytes; ++i) ASSERT_EQ(all[b * block_bytes + i], std::byte{0}) << "block " << b;
  EXPECT_THROW(transfer.to_host(std::vector<BlockId>{32}, out.as<std::byte>(), compute.get()), Error);
}

TEST_F(CudaBlockCopy, CopyBlocksKernelCopiesEveryPair) {
  const size_t block_bytes = 2048;
  const int32_t n_blocks = 16;
  const auto init = random_bytes(block_bytes * n_blocks, 2);
  auto pool = to_device(init);
  const std::vector<int32_t> pairs{0, 9, 3, 10, 3, 11, 15, 1};  // src, dst; one source twice
  auto dpairs = to_device(pairs);
  cuda::copy_blocks(pool.as(), block_bytes, dpairs.as<int32_t>(), 4, nullptr);
  const auto got = to_host<std::byte>(pool, init.size());
  auto want = init;
  for (size_t i = 0; i < pairs.size(); i += 2)
    std::memcpy(want.data() + pairs[i + 1] * block_bytes, init.data() + pairs[i] * block_bytes, block_bytes);
  EXPECT_TRUE(got == want);
}

class CudaBackendBlocks : public CudaTest, public ::testing::WithParamInterface<KvType> {};

TEST_P(CudaBackendBlocks, BackendCopiesRoundTripBitExact) {
  BackendOptions opt;
  opt.kv_type = GetParam();
  auto be = make_backend("cuda", testing::stories(), opt);
  const auto a = random_bytes(be->block_bytes(), 3), b = random_bytes(be->block_bytes(), 4);
  be->copy_block_from_host(2, a);
  be->copy_block_from_host(5, b);
  be->copy_block(2, 7);  // device-side copy-on-write
  std::vector<std::byte> got(be->block_bytes());
  be->copy_block_to_host(7, got);
  EXPECT_TRUE(got == a);
  be->copy_block_to_host(5, got);
  EXPECT_TRUE(got == b);
  EXPECT_THROW(be->copy_block_to_host(be->num_blocks(), got), Error);
  EXPECT_THROW(be->copy_block(0, -1), Error);
}

INSTANTIATE_TEST_SUITE_P(Types, CudaBackendBlocks, ::testing::Values(KvType::kF32, KvType::kF16, KvType::kBF16),
                         [](const auto& param_info) { return std::string(kv_type_name(param_info.param)); });

}  // namespace
}  // namespace kvgate
