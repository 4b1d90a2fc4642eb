// libFuzzer target: opening what a Redis server returns (cache/tiers/
// redis_seal.h), which anyone who reaches Redis can write. Any bytes go to
// RedisSeal::open under a fixed ring and name: it must never read past the
// span nor hit undefined behaviour, and must open nothing it did not seal
// (the fuzzer cannot forge an AES-GCM tag). The first input byte picks
// whether the rest is taken as a value or sealed first, so that what the
// fuzzer mutates is often a real sealed value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "cache/tiers/redis_seal.h"

namespace {

using namespace kvgate::cache;

const RedisSeal& ring() {
  static const RedisSeal seal = [] {
    RedisKeys k;
    k.names.fill(1);
    SealKey a, b;
    a.fill(2);
    b.fill(3);
    k.keys = {{2, a}, {1, b}};
    return RedisSeal(std::move(k));
  }();
  return seal;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  constexpr std::string_view kName = "kvgate:kv:2:0011223344556677:name";
  if (data[0] & 1) {
    const std::vector<std::byte> sealed = ring().seal(rest, kName);
    const auto opened = ring().open(sealed, kName);
    if (!opened || !std::equal(opened->begin(), opened->end(), rest.begin(), rest.end())) std::abort();
    return 0;
  }
  if (ring().open(rest, kName)) std::abort();  // nothing forged opens
  (void)ring().tag(rest);
  return 0;
}
