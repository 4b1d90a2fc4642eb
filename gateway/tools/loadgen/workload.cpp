// The ideal prefix-cache hit count of a planned workload. Pure; any thread.
#include "gateway/tools/loadgen/workload.h"

#include <unordered_map>
#include <unordered_set>

#include "gateway/tools/loadgen/token_blocks.h"

namespace kvgate::loadgen {

IdealCache ideal_cache(const Workload& w, int32_t block_size) {
  IdealCache out;
  if (block_size < 1) return out;
  // Per tenant: a 64-bit chain hash of every whole-block prefix prefilled so
  // far. 64 bits are plenty for a client-side estimate of a few thousand
  // requests; the server's own chain is XXH3-128 and verified.
  std::unordered_map<int32_t, std::unordered_set<uint64_t>> seen;
  for (const PlannedRequest& r : w.requests) {
    auto& blocks = seen[r.tenant];
    const size_t whole = r.prompt.size() / static_cast<size_t>(block_size);
    uint64_t h = 0;
    size_t hit = 0;
    bool missed = false;
    for (size_t b = 0; b < whole; ++b) {
      for (size_t i = b * block_size; i < (b + 1) * block_size; ++i)
        h = mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(r.prompt[i])) | (1ull << 32)));
      if (!missed && blocks.count(h)) {
        ++hit;
      } else {
        missed = true;
        blocks.insert(h);
      }
    }
    int64_t cached = static_cast<int64_t>(hit) * block_size;
    // A prompt found whole still prefills its last token for the logits.
    if (cached == static_cast<int64_t>(r.prompt.size()) && cached > 0) cached -= 1;
    out.prompt_tokens += static_cast<int64_t>(r.prompt.size());
    out.cached_tokens += cached;
  }
  return out;
}

}  // namespace kvgate::loadgen
