#include "gateway/cluster/route/block_table.h"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <utility>

namespace kvgate::route {

namespace {
constexpr int kInitialBits = 10;
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

BlockTable::Slots BlockTable::allocate(size_t n) {
  const size_t bytes = n * sizeof(Slot);
  const bool huge = bytes >= kHugePage;  // a power of two: a multiple of the huge page
  void* p = huge ? std::aligned_alloc(kHugePage, bytes) : std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without it, only slower
  std::memset(p, 0, bytes);
  return Slots(static_cast<Slot*>(p));
}

BlockTable::BlockTable()
    : slots_(allocate(size_t{1} << kInitialBits)), mask_((size_t{1} << kInitialBits) - 1), shift_(64 - kInitialBits) {}

const uint64_t* BlockTable::find(uint64_t key) const {
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    const Slot& s = at(i);
    if (s.key == key) return &s.value;
    if (s.key == 0) return nullptr;
  }
}

uint64_t* BlockTable::find(uint64_t key) { return const_cast<uint64_t*>(std::as_const(*this).find(key)); }

uint64_t& BlockTable::insert(uint64_t key, bool& fresh) {
  // Grown before the probe, so that the slot found stays where it is.
  if ((size_ + 1) * 5 > (mask_ + 1) * 4) grow();
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    Slot& s = at(i);
    if (s.key == key) {
      fresh = false;
      return s.value;
    }
    if (s.key == 0) {
      s.key = key;
      s.value = 0;
      ++size_;
      fresh = true;
      return s.value;
    }
  }
}

void BlockTable::erase(uint64_t key) {
  size_t i = home(key);
  while (at(i).key != key) {
    if (at(i).key == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward shift: every later entry of the run whose home is not between
  // the hole and itself moves into the hole.
  for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    const Slot& s = at(j);
    if (s.key == 0) break;
    const size_t h = home(s.key);
    const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (stays) continue;
    at(i) = s;
    i = j;
  }
  at(i) = Slot{};
  --size_;
}

void BlockTable::grow() {
  const size_t old_n = mask_ + 1;
  Slots old = std::exchange(slots_, allocate(old_n * 2));
  mask_ = old_n * 2 - 1;
  --shift_;
  for (size_t k = 0; k < old_n; ++k) {
    const Slot& s = old.get()[k];
    if (s.key == 0) continue;
    size_t i = home(s.key);
    while (at(i).key != 0) i = (i + 1) & mask_;
    at(i) = s;
  }
}

}  // namespace kvgate::route
