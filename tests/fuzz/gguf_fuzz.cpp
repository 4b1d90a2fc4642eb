// Feeds arbitrary bytes to the GGUF parser: it must either parse them or
// throw kvgate::Error, never read out of bounds or crash.
#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>

#include "base/error.h"
#include "engine/model/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = kvgate::GgufFile::parse(std::span(reinterpret_cast<const std::byte*>(data), size));
    // Touch every tensor's bytes so an out-of-range pointer would be caught by ASan.
    unsigned sum = 0;
    for (const auto& t : f->tensors())
      if (t.nbytes) sum += static_cast<unsigned>(t.data[0]) + static_cast<unsigned>(t.data[t.nbytes - 1]);
    // Read every array element through at(), packed scalars included.
    for (const auto& [key, value] : f->metadata())
      if (const auto* a = std::get_if<kvgate::GgufArray>(&value.v))
        for (size_t i = 0; i < a->size(); ++i) sum += static_cast<unsigned>(a->at(i).v.index());
    (void)sum;
  } catch (const kvgate::Error&) {
  }
  return 0;
}
