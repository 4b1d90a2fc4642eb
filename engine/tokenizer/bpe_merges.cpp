#include "engine/tokenizer/bpe_merges.h"

#include <algorithm>
#include <bit>
#include <map>

#include "base/error.h"

namespace kvgate {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finalizer: spreads both halves of the key
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

BpeMerges::BpeMerges(const GgufFile& f, const Vocab& vocab) : vocab_(vocab) {
  if (!f.has("tokenizer.ggml.merges"))
    throw Error(f.source() + ": byte-level BPE vocabulary has no 'tokenizer.ggml.merges'");
  const GgufArray& merges = f.get_array("tokenizer.ggml.merges");
  if (merges.elem_type != GgufType::STRING)
    throw Error(f.source() + ": metadata 'tokenizer.ggml.merges' holds " +
                std::string(gguf_type_name(merges.elem_type)) + ", expected strings");
  if (merges.items.size() > static_cast<size_t>(INT32_MAX) - static_cast<size_t>(vocab.size()))
    throw Error(f.source() + ": too many merges");

  slots_.assign(std::bit_ceil(std::max<size_t>(16, merges.items.size() * 2)), Slot{kEmpty, {}});

  std::map<std::string, int32_t, std::less<>> extra;  // build-time index of non-token symbols
  int32_t next_extra = vocab.size();
  auto intern = [&](std::string_view text) {
    if (TokenId id = vocab.find(text); id != kNoToken) return id;
    auto it = extra.find(text);
    if (it == extra.end()) it = extra.emplace(std::string(text), next_extra++).first;
    return it->second;
  };

  for (size_t i = 0; i < merges.items.size(); ++i) {
    const std::string& m = std::get<std::string>(merges.items[i].v);
    // The separator is the first space after the first byte (a left side
    // cannot be empty); llama.cpp splits the same way.
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos) continue;  // malformed entry: it can never apply
    const std::string_view left(m.data(), sp), right(m.data() + sp + 1, m.size() - sp - 1);
    if (right.empty()) continue;
    const int32_t l = intern(left), r = intern(right);
    const int32_t result = intern(m.substr(0, sp) + m.substr(sp + 1));
    const uint64_t k = key(l, r);
    Slot& s = slots_[slot_of(k)];
    if (s.key == kEmpty) {  // a repeated pair keeps its first (best) rank
      s = {k, {static_cast<int32_t>(i), result}};
      ++count_;
    }
  }
  extra_.assign(extra.begin(), extra.end());
}

size_t BpeMerges::slot_of(uint64_t k) const {
  const size_t mask = slots_.size() - 1;
  size_t i = mix(k) & mask;
  while (slots_[i].key != kEmpty && slots_[i].key != k) i = (i + 1) & mask;
  return i;
}

const BpeMerges::Merge* BpeMerges::find(int32_t left, int32_t right) const {
  if (left < 0 || right < 0) return nullptr;
  const Slot& s = slots_[slot_of(key(left, right))];
  return s.key == kEmpty ? nullptr : &s.merge;
}

int32_t BpeMerges::symbol(std::string_view text) const {
  if (TokenId id = vocab_.find(text); id != kNoToken) return id;
  auto it = std::lower_bound(extra_.begin(), extra_.end(), text,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  return it != extra_.end() && it->first == text ? it->second : kNoSymbol;
}

}  // namespace kvgate
