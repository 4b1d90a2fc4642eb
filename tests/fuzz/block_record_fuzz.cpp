// libFuzzer target: the block record parser (cache/tiers/block_record.h).
// Any bytes go to read_record_header and check_record, which must never
// read past the span nor hit undefined behaviour; a header that parses must
// describe a record of exactly the input's size, and a record that checks
// clean must re-seal to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "cache/tiers/block_record.h"

namespace {

using namespace kvgate;
using namespace kvgate::cache;

KvIdentity fuzz_identity() {
  KvIdentity id;
  id.model = {0x1111222233334444ull, 0x5555666677778888ull};
  id.n_layers = 1;
  id.n_kv_heads = 1;
  id.head_dim = 4;
  id.kv_type = 1;
  id.block_size = 2;
  return id;  // the seeds are records of this identity
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so ASan catches any read past the end.
  std::vector<std::byte> buf(size);
  if (size) std::memcpy(buf.data(), data, size);
  const std::span<const std::byte> rec(buf);

  const std::optional<RecordHeader> h = read_record_header(rec);
  const KvIdentity id = fuzz_identity();
  if (h) {
    if (!h->identity.valid() || record_bytes(h->identity) != size) __builtin_trap();
    // Check it against what it claims to be: only the payload checksum can fail.
    std::vector<TokenId> tokens(static_cast<size_t>(h->identity.block_size));
    if (h->identity.block_size > 0 && h->identity.block_size <= 4096) {
      std::memcpy(tokens.data(), buf.data() + kRecordHeaderBytes, tokens.size() * sizeof(TokenId));
      const RecordFault f = check_record(rec, h->key, tokens, h->identity);
      if (f != RecordFault::kNone && f != RecordFault::kPayloadChecksum) __builtin_trap();
      if (f == RecordFault::kNone) {
        std::vector<std::byte> again = buf;
        seal_record(again, h->key, h->owner, h->identity, tokens);
        if (again != buf) __builtin_trap();
      }
    }
  }
  // And against a fixed identity and key, as a restore would.
  const BlockKey want{{1, 2}, {3, 4}, {5, 6}, 0};
  const TokenId tokens[2] = {7, 8};
  (void)check_record(rec, want, tokens, id);
  (void)fault_name(static_cast<RecordFault>(size % 16));
  return 0;
}
