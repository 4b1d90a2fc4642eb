// Entering a sequence's newly filled blocks into the prefix cache (the
// scheduler's, after each step).
#pragma once

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "engine/sequence.h"

namespace kvgate {

// Commits every block of `s` past n_settled_blocks whose positions are all
// computed, extending its hash chain as needed, and advances
// n_settled_blocks. A block whose hash is already cached (another request
// committed it first) stays private. No-op when the sequence does not cache.
void commit_full_blocks(cache::BlockPool& pool, Sequence& s, int32_t block_size, cache::BlockHashFn hash_fn);

}  // namespace kvgate
