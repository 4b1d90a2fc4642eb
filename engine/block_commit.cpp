// Thread ownership: the caller's (the thread that owns the pool).
#include "engine/block_commit.h"

namespace kvgate {

void commit_full_blocks(cache::BlockPool& pool, Sequence& s, int32_t block_size, cache::BlockHashFn hash_fn) {
  if (!s.caching) return;
  const auto B = static_cast<size_t>(block_size);
  const auto toks = std::span<const TokenId>(s.tokens);
  for (auto i = static_cast<size_t>(s.n_settled_blocks); (i + 1) * B <= static_cast<size_t>(s.n_computed); ++i) {
    if (s.chain.size() <= i) cache::extend_chain(s.chain, s.seed, toks.first((i + 1) * B), block_size, hash_fn);
    const cache::BlockKey key{s.chain[i], i == 0 ? s.seed : s.chain[i - 1], s.req.scope, static_cast<int32_t>(i)};
    if (pool.commit(s.table[i], key, toks.subspan(i * B, B))) ++s.result.blocks_written;
    s.n_settled_blocks = static_cast<int32_t>(i + 1);
  }
}

}  // namespace kvgate
