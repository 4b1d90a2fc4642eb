#include "kernels/block_copy.h"

#include "kernels/cuda_error.h"

namespace kvgate::cuda {
namespace {

__global__ void copy_blocks_kernel(int4* pool, size_t block_vecs, const int32_t* pairs) {
  const int64_t src = pairs[2 * blockIdx.x], dst = pairs[2 * blockIdx.x + 1];
  const int4* from = pool + src * static_cast<int64_t>(block_vecs);
  int4* to = pool + dst * static_cast<int64_t>(block_vecs);
  for (size_t i = threadIdx.x; i < block_vecs; i += blockDim.x) to[i] = from[i];
}

}  // namespace

void copy_blocks(void* pool, size_t block_bytes, const int32_t* pairs, int32_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (block_bytes % sizeof(int4) != 0) throw Error("copy_blocks: block bytes not a multiple of 16");
  copy_blocks_kernel<<<static_cast<unsigned>(n), 256, 0, stream>>>(static_cast<int4*>(pool),
                                                                   block_bytes / sizeof(int4), pairs);
  check_launch("copy_blocks");
}

}  // namespace kvgate::cuda
