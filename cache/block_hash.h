// Block hash chains: the key under which a block of K/V is cached.
//
//   seed = XXH3_128(tag ‖ scope ‖ model fingerprint ‖ block size ‖ cache_salt)
//   h_0  = XXH3_128(seed ‖ tokens[0:B])
//   h_i  = XXH3_128(h_{i-1} ‖ tokens[iB:(i+1)B])
//
// K/V at a position depends only on the tokens up to it (and the model), so
// h_i names the K/V of block i exactly; the seed keeps scopes (tenants),
// models, block sizes and salts apart. Only full blocks are hashed.
//
// The bytes hashed are fixed, not the process's: hashes are little-endian
// 64-bit halves (lo then hi), token ids little-endian int32, the salt
// length-prefixed. So another process, machine or restart computes the same
// chain, which the disk tier and a KV-aware router rely on.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "cache/hash128.h"
#include "cache/ids.h"

namespace kvgate::cache {

struct ChainSeedInputs {
  ScopeId scope;                 // from the server's secret, never from the client
  ModelFingerprint model;
  int32_t block_size = 0;
  std::string_view cache_salt;   // the request's optional salt; empty = none
};

BlockHash chain_seed(const ChainSeedInputs& in);

// One link: XXH3_128(parent ‖ tokens).
BlockHash hash_block(const BlockHash& parent, std::span<const TokenId> tokens);

// The link function, as a seam: tests substitute a weak one to force
// collisions; everything else uses hash_block.
using BlockHashFn = BlockHash (*)(const BlockHash& parent, std::span<const TokenId> tokens);

// Extends `chain` (the hashes of the first chain.size() blocks of `tokens`)
// with the hashes of every further full block of `tokens`.
void extend_chain(std::vector<BlockHash>& chain, const BlockHash& seed, std::span<const TokenId> tokens,
                  int32_t block_size, BlockHashFn fn = hash_block);

}  // namespace kvgate::cache
