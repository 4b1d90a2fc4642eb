#include "kernels/step_plan.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kvgate::cuda {

void StepPlan::build(std::span<const SequenceStep> batch, const ModelConfig& c, int32_t B, int32_t n_blocks) {
  tokens.clear(), pos.clear(), slots.clear(), decode.clear(), prefill.clear(), tables.clear(), head_rows.clear();
  if (batch.empty()) throw Error("forward: empty batch");
  for (size_t s = 0; s < batch.size(); ++s) {
    const SequenceStep& st = batch[s];
    const std::string who = "forward: sequence " + std::to_string(s) + ": ";
    if (st.tokens.empty()) throw Error(who + "no tokens");
    const int64_t end = int64_t{st.start_pos} + static_cast<int64_t>(st.tokens.size());
    if (st.start_pos < 0 || end > c.context_length)
      throw Error(who + "positions up to " + std::to_string(end) + " exceed the context length " +
                  std::to_string(c.context_length));
    if (static_cast<int64_t>(st.block_table.size()) * B < end)
      throw Error(who + "block table covers " + std::to_string(st.block_table.size() * B) + " positions, needs " +
                  std::to_string(end));
    const int64_t used_blocks = (end + B - 1) / B;
    for (int64_t b = 0; b < used_blocks; ++b)
      if (st.block_table[b] < 0 || st.block_table[b] >= n_blocks)
        throw Error(who + "block id " + std::to_string(st.block_table[b]) + " is outside the pool");
    for (TokenId id : st.tokens)
      if (id < 0 || id >= c.vocab_size)
        throw Error(who + "token id " + std::to_string(id) + " is outside the vocabulary");

    const auto table = static_cast<int32_t>(tables.size());
    tables.insert(tables.end(), st.block_table.begin(), st.block_table.begin() + used_blocks);
    const auto first = static_cast<int32_t>(tokens.size());
    const auto n = static_cast<int32_t>(st.tokens.size());
    for (int32_t i = 0; i < n; ++i) {
      const int32_t p = st.start_pos + i;
      tokens.push_back(st.tokens[i]);
      pos.push_back(p);
      slots.push_back(static_cast<int64_t>(st.block_table[p / B]) * B + p % B);
    }
    if (n == 1) {
      decode.push_back({first, st.start_pos, table});
    } else {
      for (int32_t i = 0; i < n; i += kPrefillTileRows)
        prefill.push_back({first + i, std::min(kPrefillTileRows, n - i), st.start_pos + i, table});
    }
    if (st.logits == LogitsWanted::kLast) head_rows.push_back(first + n - 1);
    if (st.logits == LogitsWanted::kAll)
      for (int32_t i = 0; i < n; ++i) head_rows.push_back(first + i);
  }
}

void StepPlan::pad_decode(int64_t rows) {
  const DecodeQuery first = decode.front();
  for (auto r = static_cast<int32_t>(tokens.size()); r < rows; ++r) {
    tokens.push_back(0);
    pos.push_back(0);
    slots.push_back(-1);
    decode.push_back({r, 0, first.table});
  }
  head_rows.resize(static_cast<size_t>(rows), 0);
}

namespace {

// Appends `v`'s bytes at a 16-byte boundary and returns their offset.
template <typename T>
size_t place(const std::vector<T>& v, size_t& at) {
  const size_t off = (at + 15) & ~size_t{15};
  at = off + v.size() * sizeof(T);
  return off;
}

}  // namespace

DeviceStep StepUploader::upload(const StepPlan& p, cudaStream_t stream) {
  size_t at = 0;
  // The tables last: for steps of one row count, every array but theirs
  // starts at the same offset whatever the contexts' lengths, as a step
  // captured in a CUDA graph needs.
  const size_t o_tokens = place(p.tokens, at), o_pos = place(p.pos, at), o_slots = place(p.slots, at),
               o_decode = place(p.decode, at), o_prefill = place(p.prefill, at), o_head = place(p.head_rows, at),
               o_tables = place(p.tables, at);
  // Grown by half again, so a growing batch does not reallocate every step.
  if (host_.bytes() < at) {
    host_ = PinnedBuffer();
    host_ = PinnedBuffer(at + at / 2, "step metadata (host)");
  }
  ensure_bytes(device_, host_.bytes(), "step metadata");
  auto* h = host_.as<std::byte>();
  auto copy = [&](const auto& v, size_t off) {
    if (!v.empty()) std::memcpy(h + off, v.data(), v.size() * sizeof(v[0]));
  };
  copy(p.tokens, o_tokens), copy(p.pos, o_pos), copy(p.slots, o_slots), copy(p.decode, o_decode);
  copy(p.prefill, o_prefill), copy(p.tables, o_tables), copy(p.head_rows, o_head);
  check(cudaMemcpyAsync(device_.as(), h, at, cudaMemcpyHostToDevice, stream), "step metadata upload");
  auto* d = device_.as<std::byte>();
  return {reinterpret_cast<const int32_t*>(d + o_tokens),       reinterpret_cast<const int32_t*>(d + o_pos),
          reinterpret_cast<const int64_t*>(d + o_slots),        reinterpret_cast<const DecodeQuery*>(d + o_decode),
          reinterpret_cast<const PrefillTile*>(d + o_prefill), reinterpret_cast<const int32_t*>(d + o_tables),
          reinterpret_cast<const int32_t*>(d + o_head)};
}

}  // namespace kvgate::cuda
