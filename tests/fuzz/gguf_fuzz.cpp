// Feeds arbitrary bytes to the GGUF parser: it must either parse them or
// throw kvgate::Error, never read out of bounds or crash. Then widens the
// first rows of every tensor: quantized blocks hold whatever the bytes say
// (scales that are NaN or infinite, 6-bit scales past the range a
// quantizer writes), and decoding them must stay in bounds and defined.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = kvgate::GgufFile::parse(std::span(reinterpret_cast<const std::byte*>(data), size));
    // Touch every tensor's bytes so an out-of-range pointer would be caught by ASan.
    unsigned sum = 0;
    std::vector<float> row;
    for (const auto& t : f->tensors()) {
      if (t.nbytes) sum += static_cast<unsigned>(t.data[0]) + static_cast<unsigned>(t.data[t.nbytes - 1]);
      const int64_t cols = t.dims[0], rows = std::min<int64_t>(t.rows(), 4);
      if (cols > (int64_t{1} << 16)) continue;
      row.resize(static_cast<size_t>(cols));
      const uint64_t row_bytes = t.nbytes / static_cast<uint64_t>(t.rows());
      for (int64_t r = 0; r < rows; ++r) {
        kvgate::dequantize_row(t.type, t.data + static_cast<uint64_t>(r) * row_bytes, row.data(), cols);
        sum += static_cast<unsigned>(row[0] == row[0]);
      }
    }
    // Read every array element through at(), packed scalars included.
    for (const auto& [key, value] : f->metadata())
      if (const auto* a = std::get_if<kvgate::GgufArray>(&value.v))
        for (size_t i = 0; i < a->size(); ++i) sum += static_cast<unsigned>(a->at(i).v.index());
    (void)sum;
  } catch (const kvgate::Error&) {
  }
  return 0;
}
