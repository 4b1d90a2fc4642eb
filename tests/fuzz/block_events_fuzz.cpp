// libFuzzer target: the block-event wire format (gateway/route/event_wire.h),
// what a route front reads from every replica's socket. Any bytes go to
// decode(), which must never read past the span, allocate for a count the
// bytes cannot hold, or hit undefined behaviour; a message that decodes
// must encode back to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "gateway/cluster/wire/event_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    const kvgate::wire::EventMessage m = kvgate::wire::decode(in);
    const std::vector<std::byte> again = kvgate::wire::encode(m);
    if (again.size() != size || !std::equal(again.begin(), again.end(), in.begin())) std::abort();
  } catch (const kvgate::wire::WireError&) {
  }
  return 0;
}
