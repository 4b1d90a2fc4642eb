#include "engine/text/stream_decoder.h"

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

namespace kvgate {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool at_text_start)
    : tokenizer_(tokenizer), at_start_(at_text_start) {}

std::string StreamDecoder::push(TokenId id) {
  tokenizer_.append_piece(pending_, id, at_start_);
  std::string out;
  const size_t used = utf8_append_valid(out, pending_, /*final=*/false);
  pending_.erase(0, used);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out;
  utf8_append_valid(out, pending_, /*final=*/true);
  pending_.clear();
  at_start_ = true;
  return out;
}

}  // namespace kvgate
