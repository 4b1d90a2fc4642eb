// What one render may cost. A template is code from a model file, run on
// every chat request: these bound its time, memory and stack whatever it
// does, and hitting one is a TemplateError (kLimit) naming the limit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvgate::jinja {

struct Limits {
  // Statements run, loop iterations, calls and filters applied. Real chat
  // templates take a few thousand on a long conversation.
  uint64_t max_steps = 2'000'000;
  // Bytes of any one string built (the output, a macro's, a `~` chain's).
  std::size_t max_output_bytes = 8u << 20;
  // Macro calls (and call blocks) active at once.
  int max_call_depth = 64;
};

}  // namespace kvgate::jinja
