// One forward step's input and output: the seam between the scheduler and
// a Backend.
//
// A step runs a batch of sequences; each contributes new tokens at positions
// [start_pos, start_pos + n) and a block table that maps every position up to
// start_pos + n to a KV block (position p lives in block_table[p / B] at slot
// p % B). The backend writes the new tokens' K/V into those slots and attends
// over all earlier positions through the same table. Blocks that hold only
// earlier positions are read, never written: that is what lets the prefix
// cache share them between sequences. Header-only: part of the Backend seam.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/ids.h"

namespace kvgate {

enum class LogitsWanted : uint8_t { kNone, kLast, kAll };

struct SequenceStep {
  std::span<const TokenId> tokens;
  int32_t start_pos = 0;
  std::span<const BlockId> block_table;
  LogitsWanted logits = LogitsWanted::kLast;
};

// Logits rows for the batch, in batch order: for each sequence none, its last
// token's, or one per new token.
class Logits {
 public:
  int32_t vocab() const { return vocab_; }
  int32_t rows(size_t seq) const { return seq_rows_[seq]; }
  std::span<const float> row(size_t seq, int32_t i = -1) const {
    int32_t r = first_row_[seq] + (i < 0 ? seq_rows_[seq] - 1 : i);
    return {data_.data() + static_cast<size_t>(r) * vocab_, static_cast<size_t>(vocab_)};
  }

  // For backends: sizes the buffer for `batch` and sets the row offsets.
  void reset(std::span<const SequenceStep> batch, int32_t vocab) {
    vocab_ = vocab;
    first_row_.clear();
    seq_rows_.clear();
    total_rows_ = 0;
    for (const SequenceStep& s : batch) {
      const int32_t n = s.logits == LogitsWanted::kNone   ? 0
                        : s.logits == LogitsWanted::kLast ? 1
                                                          : static_cast<int32_t>(s.tokens.size());
      first_row_.push_back(total_rows_);
      seq_rows_.push_back(n);
      total_rows_ += n;
    }
    data_.resize(static_cast<size_t>(total_rows_) * vocab_);
  }
  float* row_data(int32_t r) { return data_.data() + static_cast<size_t>(r) * vocab_; }
  int32_t first_row(size_t seq) const { return first_row_[seq]; }
  int32_t total_rows() const { return total_rows_; }

 private:
  int32_t vocab_ = 0;
  int32_t total_rows_ = 0;
  std::vector<int32_t> first_row_, seq_rows_;
  std::vector<float> data_;
};

}  // namespace kvgate
