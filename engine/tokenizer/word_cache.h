// WordCache: word -> its token ids, shared by all threads of one tokenizer.
//
// Both tokenizers merge within words that cannot affect each other (BPE: the
// pre-tokenizer's words; SPM: runs starting at a '▁', when the vocabulary
// allows it), and prompts repeat words (a prefix-cache hit repeats whole
// prompts), so the merge loop runs once per distinct word.
//
// Invariant: an entry's ids are exactly what the tokenizer's merge loop gives
// for its key; entries never change, they are only dropped. A lookup is one
// hash, one shard lock and one probe: each shard is an open-addressing table
// whose keys and ids live in two flat arenas; when a shard fills up it is
// cleared wholesale, which bounds memory without per-entry bookkeeping.
//
// In front of the shards each thread keeps a small direct-mapped copy of the
// words it saw last (short words only), read and written without any lock:
// the shard mutex was the largest single cost of encoding repeated text.
// Its entries are tagged with the cache's unique id, never its address, so a
// new cache can never read a destroyed one's entries.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cache/ids.h"
#include "base/mutex.h"

namespace kvgate {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 64;  // longer words rarely repeat
  static constexpr size_t kShards = 32;
  static constexpr size_t kSlotsPerShard = 4096;  // power of two; filled to half at most

  WordCache();
  WordCache(const WordCache&) = delete;
  WordCache& operator=(const WordCache&) = delete;

  // Appends the cached ids of `word` to `out` and returns true on a hit.
  bool lookup(std::string_view word, Tokens& out) const;
  void insert(std::string_view word, const TokenId* ids, size_t n) const;

 private:
  struct Slot {
    uint64_t hash = 0;  // 0 = empty (hash() never returns 0)
    uint32_t key_at = 0, ids_at = 0;
    uint16_t key_len = 0, n_ids = 0;
  };
  struct Shard {
    Mutex mu;
    std::vector<Slot> slots ABSL_GUARDED_BY(mu);
    std::string keys ABSL_GUARDED_BY(mu);
    std::vector<TokenId> ids ABSL_GUARDED_BY(mu);
    size_t used ABSL_GUARDED_BY(mu) = 0;
  };

  static uint64_t hash(std::string_view word);
  bool lookup_shared(std::string_view word, uint64_t h, Tokens& out) const;
  void remember_locally(std::string_view word, uint64_t h, const TokenId* ids, size_t n) const;

  const uint64_t id_;  // tags this cache's entries in the per-thread front caches
  Shard& shard(uint64_t h) const { return shards_[h % kShards]; }

  mutable std::array<Shard, kShards> shards_;
};

}  // namespace kvgate
