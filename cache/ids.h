// The ids of tokens and KV blocks, defined once for every module above
// cache/ (the engine, its Backend seam, the CUDA kernels, the gateway).
#pragma once

#include <cstdint>
#include <vector>

namespace kvgate {

using TokenId = int32_t;  // as in llama.cpp and the OpenAI API
using Tokens = std::vector<TokenId>;
using BlockId = int32_t;  // a block of the device KV pool; local to one process

}  // namespace kvgate
