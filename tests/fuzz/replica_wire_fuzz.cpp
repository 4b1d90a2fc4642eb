// libFuzzer target: the front <-> replica wire (gateway/serving/replica_wire.h).
// The same bytes go to the three decoders a peer's bytes reach: the request
// body (a replica parses what a front sent), the info body and the response
// stream (a front reads what a replica sent), the stream cut into pieces
// whose sizes the first bytes choose. Each must refuse with a
// ReplicaWireError or accept; what it accepts must encode and parse back to
// itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gateway/cluster/wire/replica_wire.h"

namespace {

using namespace kvgate;
using namespace kvgate::wire;

void call(std::string_view in) {
  ReplicaCall c;
  try {
    c = parse_replica_call(in);
  } catch (const ReplicaWireError&) {
    return;
  }
  const ReplicaCall again = parse_replica_call(encode_replica_call(c.request, c.who));  // must not throw
  const Request &a = c.request, &b = again.request;
  if (a.prompt != b.prompt || a.stop_ids != b.stop_ids || a.scope != b.scope || a.cache_salt != b.cache_salt ||
      a.max_tokens != b.max_tokens || a.ignore_eos != b.ignore_eos || a.use_cache != b.use_cache ||
      a.pins != b.pins || a.sampling.temperature != b.sampling.temperature ||
      a.sampling.top_k != b.sampling.top_k || a.sampling.top_p != b.sampling.top_p ||
      a.sampling.seed != b.sampling.seed || c.who.tenant != again.who.tenant ||
      c.who.priority != again.who.priority || c.who.cache_quota_blocks != again.who.cache_quota_blocks ||
      c.who.pin_quota_blocks != again.who.pin_quota_blocks)
    std::abort();
}

void info(std::string_view in) {
  ReplicaInfo i;
  try {
    i = parse_replica_info(in);
  } catch (const ReplicaWireError&) {
    return;
  }
  const ReplicaInfo j = parse_replica_info(encode_replica_info(i));
  if (j.model != i.model || !(j.identity == i.identity) || j.prefix_cache != i.prefix_cache ||
      j.bounds.context_length != i.bounds.context_length || j.bounds.vocab_size != i.bounds.vocab_size ||
      j.bounds.block_size != i.bounds.block_size || j.bounds.pool_blocks != i.bounds.pool_blocks ||
      j.block_events != i.block_events || j.outstanding != i.outstanding)
    std::abort();
}

void stream(std::string_view in) {
  const SteadyClock::time_point arrival = SteadyClock::now();
  size_t tokens = 0, dones = 0;
  ReplicaStreamReader r(
      arrival, [&](TokenId t) { ++tokens, t < 0 ? std::abort() : void(); },
      [&](Completion c) {
        ++dones;
        if (c.result.output.size() != tokens) std::abort();
        if (c.timing.admitted != SteadyClock::time_point{} && c.timing.admitted < arrival) std::abort();
      });
  const uint8_t step = in.empty() ? 1 : static_cast<uint8_t>(in[0]) % 17 + 1;
  try {
    for (size_t at = 0; at < in.size(); at += step) r.feed(in.substr(at, step), arrival);
  } catch (const ReplicaWireError&) {
  }
  if (dones > 1 || r.done() != (dones == 1)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  call(in);
  info(in);
  stream(in);
  return 0;
}
