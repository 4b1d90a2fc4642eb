// Block hash chains over XXH3-128. Pure functions: safe from any thread.
#include "cache/block_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>

namespace kvgate::cache {
namespace {

// Bumped if the hashed bytes ever change, so old disk-tier blocks miss.
constexpr std::string_view kSeedTag = "kvgate.block-chain.v1";

void put_u64(std::byte* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}

void put_hash(std::byte* out, const Hash128& h) {
  put_u64(out, h.lo);
  put_u64(out + 8, h.hi);
}

void put_tokens(std::byte* out, std::span<const TokenId> tokens) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, tokens.data(), tokens.size_bytes());
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      const auto v = static_cast<uint32_t>(tokens[i]);
      for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::byte>(v >> (8 * b));
    }
  }
}

Hash128 from_xxh(XXH128_hash_t h) { return {h.low64, h.high64}; }

struct XxhState {
  XxhState() : s(XXH3_createState()) {
    if (!s || XXH3_128bits_reset(s) != XXH_OK) throw std::bad_alloc();
  }
  ~XxhState() { XXH3_freeState(s); }
  XxhState(const XxhState&) = delete;
  XxhState& operator=(const XxhState&) = delete;
  void update(const void* p, size_t n) { XXH3_128bits_update(s, p, n); }
  Hash128 digest() const { return from_xxh(XXH3_128bits_digest(s)); }
  XXH3_state_t* s;
};

}  // namespace

BlockHash chain_seed(const ChainSeedInputs& in) {
  std::array<std::byte, 16 + 16 + 4 + 8> fixed{};
  put_hash(fixed.data(), in.scope);
  put_hash(fixed.data() + 16, in.model);
  const auto bs = static_cast<uint32_t>(in.block_size);
  for (int i = 0; i < 4; ++i) fixed[32 + i] = static_cast<std::byte>(bs >> (8 * i));
  put_u64(fixed.data() + 36, in.cache_salt.size());
  XxhState st;
  st.update(kSeedTag.data(), kSeedTag.size());
  st.update(fixed.data(), fixed.size());
  st.update(in.cache_salt.data(), in.cache_salt.size());
  return st.digest();
}

BlockHash hash_block(const BlockHash& parent, std::span<const TokenId> tokens) {
  // One contiguous buffer (parent ‖ tokens) hashed in one call: a block of
  // 16 tokens is 80 bytes, where XXH3's one-shot path is several times
  // faster than its streaming state. Larger blocks stream.
  constexpr size_t kMaxOneShotTokens = 128;
  if (tokens.size() <= kMaxOneShotTokens) {
    std::array<std::byte, 16 + 4 * kMaxOneShotTokens> buf;
    put_hash(buf.data(), parent);
    put_tokens(buf.data() + 16, tokens);
    return from_xxh(XXH3_128bits(buf.data(), 16 + tokens.size_bytes()));
  }
  XxhState st;
  std::array<std::byte, 16> p;
  put_hash(p.data(), parent);
  st.update(p.data(), p.size());
  std::array<std::byte, 4 * kMaxOneShotTokens> buf;
  for (size_t i = 0; i < tokens.size(); i += kMaxOneShotTokens) {
    const auto piece = tokens.subspan(i, std::min(kMaxOneShotTokens, tokens.size() - i));
    put_tokens(buf.data(), piece);
    st.update(buf.data(), piece.size_bytes());
  }
  return st.digest();
}

void extend_chain(std::vector<BlockHash>& chain, const BlockHash& seed, std::span<const TokenId> tokens,
                  int32_t block_size, BlockHashFn fn) {
  if (block_size <= 0) throw std::invalid_argument("extend_chain: block size must be positive");
  const size_t B = static_cast<size_t>(block_size);
  for (size_t i = chain.size(); (i + 1) * B <= tokens.size(); ++i)
    chain.push_back(fn(i == 0 ? seed : chain[i - 1], tokens.subspan(i * B, B)));
}

}  // namespace kvgate::cache
