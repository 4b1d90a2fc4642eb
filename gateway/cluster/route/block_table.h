// BlockTable: an open-addressing hash table from a 64-bit block key to one
// 64-bit value, 16 bytes a slot: what ReplicaIndex keeps its tens of
// millions of entries in (a node-based map would cost 4x the memory and a
// cache miss per node).
//
// Linear probing over a power-of-two array, slot = Fibonacci hash of the
// key, at most 80% full (then it doubles), deletion by backward shift (no
// tombstones, so lookups never slow down as entries come and go). Key 0
// marks an empty slot and cannot be stored. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace kvgate::route {

class BlockTable {
 public:
  BlockTable();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t memory_bytes() const { return (mask_ + 1) * sizeof(Slot); }

  // The value stored under `key`, or nullptr. A pointer is valid until the
  // next insert or erase.
  const uint64_t* find(uint64_t key) const;
  uint64_t* find(uint64_t key);
  // The value under `key`, inserted as 0 if absent (`fresh` says which).
  uint64_t& insert(uint64_t key, bool& fresh);
  void erase(uint64_t key);
  // Starts loading `key`'s home slot into the cache, for a walk that knows
  // its next keys before it needs them.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_.get()[home(key)]); }

  // Calls f(key, value&) for every entry; entries for which it returns true
  // are erased afterwards.
  template <class F>
  void erase_if(F f) {
    std::vector<uint64_t> gone;
    for (size_t i = 0; i <= mask_; ++i) {
      Slot& s = slots_.get()[i];
      if (s.key != 0 && f(s.key, s.value)) gone.push_back(s.key);
    }
    for (uint64_t k : gone) erase(k);
  }

 private:
  struct Slot {
    uint64_t key = 0, value = 0;
  };
  struct Free {
    void operator()(Slot* p) const { std::free(p); }
  };
  using Slots = std::unique_ptr<Slot, Free>;
  static Slots allocate(size_t n);  // n zeroed slots
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_); }
  Slot& at(size_t i) const { return slots_.get()[i]; }
  void grow();

  Slots slots_;
  size_t mask_ = 0, size_ = 0;
  int shift_ = 0;
};

}  // namespace kvgate::route
