#include "engine/batch.h"

namespace kvgate {

void Logits::reset(std::span<const SequenceStep> batch, int32_t vocab) {
  vocab_ = vocab;
  first_row_.clear();
  seq_rows_.clear();
  total_rows_ = 0;
  for (const SequenceStep& s : batch) {
    int32_t n = s.logits == LogitsWanted::kNone ? 0
                : s.logits == LogitsWanted::kLast ? 1
                                                  : static_cast<int32_t>(s.tokens.size());
    first_row_.push_back(total_rows_);
    seq_rows_.push_back(n);
    total_rows_ += n;
  }
  data_.resize(static_cast<size_t>(total_rows_) * vocab_);
}

}  // namespace kvgate
