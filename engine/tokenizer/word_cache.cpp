#include "engine/tokenizer/word_cache.h"

#include <algorithm>
#include <cstring>

namespace kvgate {
namespace {

// One per-thread front entry: a short word and its few ids, inline.
struct FrontEntry {
  uint64_t owner = 0;  // WordCache::id_, 0 = empty
  uint64_t hash = 0;
  uint8_t key_len = 0, n_ids = 0;
  char key[22];
  TokenId ids[6];
};
constexpr size_t kFrontEntries = 1024;  // 64 KiB per thread

FrontEntry& front_entry(uint64_t h) {
  thread_local std::array<FrontEntry, kFrontEntries> front{};
  return front[(h >> 20) & (kFrontEntries - 1)];
}

std::atomic<uint64_t> next_cache_id{1};

}  // namespace

WordCache::WordCache() : id_(next_cache_id.fetch_add(1)) {
  for (Shard& s : shards_) s.slots.resize(kSlotsPerShard);
}

uint64_t WordCache::hash(std::string_view word) {
  // Words are short: 8 bytes per multiply-xorshift round. The tail is read
  // with fixed-size loads (overlapping ones where possible): a variable-size
  // copy into a stack word stalls store forwarding on every call.
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const size_t n = word.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  auto round = [&h](uint64_t v) {
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    round(v);
  }
  const size_t rest = n - i;
  if (rest > 0) {
    uint64_t v;
    if (n >= 8) {
      std::memcpy(&v, p + n - 8, 8);
    } else if (rest >= 4) {
      uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + rest - 4, 4);
      v = a | (uint64_t{b} << 32);
    } else {
      v = p[0] | (uint64_t{p[rest / 2]} << 8) | (uint64_t{p[rest - 1]} << 16);
    }
    round(v);
  }
  h *= 0x94D049BB133111EBull;
  h ^= h >> 32;
  return h | 1;  // never 0, the empty-slot marker
}

void WordCache::remember_locally(std::string_view word, uint64_t h, const TokenId* ids, size_t n) const {
  if (word.size() > sizeof(FrontEntry::key) || n > std::size(FrontEntry{}.ids)) return;
  FrontEntry& e = front_entry(h);
  e.owner = id_;
  e.hash = h;
  e.key_len = static_cast<uint8_t>(word.size());
  e.n_ids = static_cast<uint8_t>(n);
  std::memcpy(e.key, word.data(), word.size());
  std::copy(ids, ids + n, e.ids);
}

bool WordCache::lookup(std::string_view word, Tokens& out) const {
  if (word.size() > kMaxWordBytes) return false;
  const uint64_t h = hash(word);
  const FrontEntry& e = front_entry(h);
  if (e.owner == id_ && e.hash == h && e.key_len == word.size() &&
      std::memcmp(e.key, word.data(), word.size()) == 0) {
    out.insert(out.end(), e.ids, e.ids + e.n_ids);
    return true;
  }
  const size_t before = out.size();
  if (!lookup_shared(word, h, out)) return false;
  remember_locally(word, h, out.data() + before, out.size() - before);
  return true;
}

bool WordCache::lookup_shared(std::string_view word, uint64_t h, Tokens& out) const {
  Shard& s = shard(h);
  MutexLock lock(s.mu);
  // The shard index used the low bits; probe with the high ones.
  for (size_t i = (h >> 32) & (kSlotsPerShard - 1);; i = (i + 1) & (kSlotsPerShard - 1)) {
    const Slot& slot = s.slots[i];
    if (slot.hash == 0) return false;
    if (slot.hash == h && slot.key_len == word.size() &&
        std::memcmp(s.keys.data() + slot.key_at, word.data(), word.size()) == 0) {
      out.insert(out.end(), s.ids.begin() + slot.ids_at, s.ids.begin() + slot.ids_at + slot.n_ids);
      return true;
    }
  }
}

void WordCache::insert(std::string_view word, const TokenId* ids, size_t n) const {
  if (word.size() > kMaxWordBytes || n > UINT16_MAX) return;
  const uint64_t h = hash(word);
  remember_locally(word, h, ids, n);
  Shard& s = shard(h);
  MutexLock lock(s.mu);
  if (s.used >= kSlotsPerShard / 2) {  // full: start over rather than track age
    std::fill(s.slots.begin(), s.slots.end(), Slot{});
    s.keys.clear();
    s.ids.clear();
    s.used = 0;
  }
  size_t i = (h >> 32) & (kSlotsPerShard - 1);
  for (;; i = (i + 1) & (kSlotsPerShard - 1)) {
    const Slot& slot = s.slots[i];
    if (slot.hash == 0) break;
    if (slot.hash == h && slot.key_len == word.size() &&
        std::memcmp(s.keys.data() + slot.key_at, word.data(), word.size()) == 0)
      return;  // another thread got here first; the ids are the same
  }
  s.slots[i] = {h, static_cast<uint32_t>(s.keys.size()), static_cast<uint32_t>(s.ids.size()),
                static_cast<uint16_t>(word.size()), static_cast<uint16_t>(n)};
  s.keys.append(word);
  s.ids.insert(s.ids.end(), ids, ids + n);
  ++s.used;
}

}  // namespace kvgate
