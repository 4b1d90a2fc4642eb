// Token ids are int32, as in llama.cpp and the OpenAI API.
#pragma once

#include <cstdint>
#include <vector>

namespace kvgate {

using TokenId = int32_t;
using Tokens = std::vector<TokenId>;

}  // namespace kvgate
