// libFuzzer target: arbitrary bytes as what a server under load sends back
// to `kvgate bench-serve`: an SSE stream cut into pieces at arbitrary
// points, each event read as a completion chunk, and the same bytes read as
// a /metrics exposition. Nothing the server says may crash the load
// generator or throw: a bad frame is kMalformed, a bad metrics line is
// skipped.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/tools/loadgen/prometheus_scrape.h"
#include "gateway/tools/loadgen/stream_frames.h"

using namespace kvgate::loadgen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The first byte picks the piece size, so splits fall everywhere.
  const size_t piece = size == 0 ? 1 : 1 + data[0] % 17;
  SseSplitter split;
  std::vector<std::string> events;
  for (size_t at = 0; at < text.size(); at += piece) split.feed(text.substr(at, piece), events);
  for (const std::string& e : events) (void)read_stream_frame(e);
  (void)sum_by_label(text, "kvgate_cost_usd_total", "tenant");
  (void)sum_by_label(text, "kvgate_prefix_cache_hits_tokens_total", "");
  return 0;
}
