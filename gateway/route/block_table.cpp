#include "gateway/route/block_table.h"

#include <utility>

namespace kvgate::route {

namespace {
constexpr int kInitialBits = 10;
}

BlockTable::BlockTable() : slots_(size_t{1} << kInitialBits), mask_(slots_.size() - 1), shift_(64 - kInitialBits) {}

const uint64_t* BlockTable::find(uint64_t key) const {
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.key == key) return &s.value;
    if (s.key == 0) return nullptr;
  }
}

uint64_t* BlockTable::find(uint64_t key) { return const_cast<uint64_t*>(std::as_const(*this).find(key)); }

uint64_t& BlockTable::insert(uint64_t key, bool& fresh) {
  // Grown before the probe, so that the slot found stays where it is.
  if ((size_ + 1) * 5 > slots_.size() * 4) grow();
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
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
  while (slots_[i].key != key) {
    if (slots_[i].key == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward shift: every later entry of the run whose home is not between
  // the hole and itself moves into the hole.
  for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    const Slot& s = slots_[j];
    if (s.key == 0) break;
    const size_t h = home(s.key);
    const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (stays) continue;
    slots_[i] = s;
    i = j;
  }
  slots_[i] = Slot{};
  --size_;
}

void BlockTable::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  --shift_;
  for (const Slot& s : old) {
    if (s.key == 0) continue;
    size_t i = home(s.key);
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

}  // namespace kvgate::route
