// Block records: sealing and checking (layout in block_record.h).
#include "cache/tiers/block_record.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvgate::cache {
namespace {

static_assert(std::endian::native == std::endian::little, "records are little-endian; this build assumes the host is too");

constexpr char kMagic[4] = {'K', 'V', 'G', 'B'};
constexpr size_t kPayloadAlign = 64;
// Sizes a header may claim before we even try to compare them to the span:
// anything larger cannot be a record this build wrote.
constexpr int32_t kMaxBlockSize = 1 << 20;
constexpr uint64_t kMaxPayload = uint64_t{1} << 40;

// Field offsets (block_record.h).
constexpr size_t kOffVersion = 4, kOffHeaderSize = 6, kOffHash = 8, kOffParent = 24, kOffScope = 40, kOffModel = 56,
                 kOffOwner = 72, kOffDepth = 80, kOffLayers = 84, kOffHeads = 88, kOffHeadDim = 92,
                 kOffBlockSize = 96, kOffHashScheme = 100, kOffKvType = 104, kOffReserved = 105, kOffPayloadBytes = 112,
                 kOffTokensSum = 120, kOffPayloadSum = 128, kOffHeaderSum = 136;
static_assert(kOffHeaderSum + 8 == kRecordHeaderBytes);

template <class T>
T load(std::span<const std::byte> s, size_t off) {
  T v;
  std::memcpy(&v, s.data() + off, sizeof(T));
  return v;
}
template <class T>
void store(std::span<std::byte> s, size_t off, T v) {
  std::memcpy(s.data() + off, &v, sizeof(T));
}
Hash128 load128(std::span<const std::byte> s, size_t off) { return {load<uint64_t>(s, off), load<uint64_t>(s, off + 8)}; }
void store128(std::span<std::byte> s, size_t off, const Hash128& h) {
  store(s, off, h.lo);
  store(s, off + 8, h.hi);
}

uint64_t xxh(std::span<const std::byte> s) { return XXH3_64bits(s.data(), s.size()); }

bool all_zero(std::span<const std::byte> s) {
  return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0}; });
}

size_t align_up(size_t n) { return (n + kPayloadAlign - 1) / kPayloadAlign * kPayloadAlign; }

// What a header (already checksummed) says about the record's extent.
struct Extent {
  size_t tokens_end = 0, payload_offset = 0, total = 0;
};
std::optional<Extent> extent_of(std::span<const std::byte> r) {
  const int32_t block_size = load<int32_t>(r, kOffBlockSize);
  const uint64_t payload = load<uint64_t>(r, kOffPayloadBytes);
  if (block_size <= 0 || block_size > kMaxBlockSize || payload > kMaxPayload) return std::nullopt;
  Extent e;
  e.tokens_end = kRecordHeaderBytes + static_cast<size_t>(block_size) * sizeof(TokenId);
  e.payload_offset = align_up(e.tokens_end);
  e.total = e.payload_offset + static_cast<size_t>(payload);
  return e;
}

// Size, magic, version, header checksum, claimed size, token checksum: what
// both check_record and read_record_header need before trusting a field.
RecordFault check_frame(std::span<const std::byte> r, Extent* out) {
  if (r.size() < kRecordHeaderBytes) return RecordFault::kTruncated;
  if (std::memcmp(r.data(), kMagic, sizeof kMagic) != 0) return RecordFault::kBadMagic;
  if (load<uint16_t>(r, kOffVersion) != kRecordVersion || load<uint16_t>(r, kOffHeaderSize) != kRecordHeaderBytes)
    return RecordFault::kBadMagic;
  if (xxh(r.first(kOffHeaderSum)) != load<uint64_t>(r, kOffHeaderSum)) return RecordFault::kHeaderChecksum;
  // Reserved bytes set: a layout this build does not know how to read.
  if (!all_zero(r.subspan(kOffReserved, kOffPayloadBytes - kOffReserved))) return RecordFault::kBadMagic;
  const std::optional<Extent> e = extent_of(r);
  if (!e || e->total != r.size()) return RecordFault::kTruncated;
  if (xxh(r.subspan(kRecordHeaderBytes, e->payload_offset - kRecordHeaderBytes)) != load<uint64_t>(r, kOffTokensSum))
    return RecordFault::kHeaderChecksum;
  // seal_record zeroes the padding; so a record that checks clean is exactly
  // what sealing its fields gives, whatever checksums a writer computed.
  if (!all_zero(r.subspan(e->tokens_end, e->payload_offset - e->tokens_end))) return RecordFault::kHeaderChecksum;
  *out = *e;
  return RecordFault::kNone;
}

KvIdentity identity_of(std::span<const std::byte> r) {
  KvIdentity id;
  id.model = load128(r, kOffModel);
  id.n_layers = load<int32_t>(r, kOffLayers);
  id.n_kv_heads = load<int32_t>(r, kOffHeads);
  id.head_dim = load<int32_t>(r, kOffHeadDim);
  id.block_size = load<int32_t>(r, kOffBlockSize);
  id.hash_scheme = load<uint32_t>(r, kOffHashScheme);
  id.kv_type = load<uint8_t>(r, kOffKvType);
  return id;
}

}  // namespace

uint64_t identity_digest(const KvIdentity& id) {
  std::byte buf[16 + 4 * 4 + 4 + 1];
  const std::span<std::byte> s(buf);
  store128(s, 0, id.model);
  store(s, 16, id.n_layers);
  store(s, 20, id.n_kv_heads);
  store(s, 24, id.head_dim);
  store(s, 28, id.block_size);
  store(s, 32, id.hash_scheme);
  store(s, 36, id.kv_type);
  return xxh(s);
}

size_t record_payload_offset(int32_t block_size) {
  return align_up(kRecordHeaderBytes + static_cast<size_t>(std::max(block_size, 0)) * sizeof(TokenId));
}

size_t record_bytes(const KvIdentity& id) {
  if (!id.valid()) return 0;
  return record_payload_offset(id.block_size) + static_cast<size_t>(id.payload_bytes());
}

std::span<std::byte> record_payload(std::span<std::byte> record, const KvIdentity& id) {
  if (!id.valid() || record.size() != record_bytes(id))
    throw std::invalid_argument("record_payload: a record of this identity is " + std::to_string(record_bytes(id)) +
                                " bytes, the buffer " + std::to_string(record.size()));
  return record.subspan(record_payload_offset(id.block_size));
}

std::span<const std::byte> record_payload(std::span<const std::byte> record, const KvIdentity& id) {
  if (!id.valid() || record.size() != record_bytes(id))
    throw std::invalid_argument("record_payload: a record of this identity is " + std::to_string(record_bytes(id)) +
                                " bytes, the buffer " + std::to_string(record.size()));
  return record.subspan(record_payload_offset(id.block_size));
}

void seal_record(std::span<std::byte> r, const BlockKey& key, TenantId owner, const KvIdentity& id,
                 std::span<const TokenId> tokens) {
  if (!id.valid()) throw std::invalid_argument("seal_record: invalid KV identity");
  if (r.size() != record_bytes(id))
    throw std::invalid_argument("seal_record: a record of this identity is " + std::to_string(record_bytes(id)) +
                                " bytes, the buffer " + std::to_string(r.size()));
  if (tokens.size() != static_cast<size_t>(id.block_size))
    throw std::invalid_argument("seal_record: a block holds " + std::to_string(id.block_size) + " tokens, not " +
                                std::to_string(tokens.size()));
  const size_t tokens_end = kRecordHeaderBytes + tokens.size() * sizeof(TokenId);
  const size_t payload_offset = record_payload_offset(id.block_size);

  std::memset(r.data(), 0, kRecordHeaderBytes);
  std::memcpy(r.data(), kMagic, sizeof kMagic);
  store(r, kOffVersion, kRecordVersion);
  store(r, kOffHeaderSize, static_cast<uint16_t>(kRecordHeaderBytes));
  store128(r, kOffHash, key.hash);
  store128(r, kOffParent, key.parent);
  store128(r, kOffScope, key.scope);
  store128(r, kOffModel, id.model);
  store(r, kOffOwner, owner);
  store(r, kOffDepth, key.depth);
  store(r, kOffLayers, id.n_layers);
  store(r, kOffHeads, id.n_kv_heads);
  store(r, kOffHeadDim, id.head_dim);
  store(r, kOffBlockSize, id.block_size);
  store(r, kOffHashScheme, id.hash_scheme);
  store(r, kOffKvType, id.kv_type);
  store(r, kOffPayloadBytes, static_cast<uint64_t>(id.payload_bytes()));
  if (!tokens.empty()) std::memcpy(r.data() + kRecordHeaderBytes, tokens.data(), tokens.size() * sizeof(TokenId));
  std::memset(r.data() + tokens_end, 0, payload_offset - tokens_end);
  const std::span<const std::byte> c(r);
  store(r, kOffTokensSum, xxh(c.subspan(kRecordHeaderBytes, payload_offset - kRecordHeaderBytes)));
  store(r, kOffPayloadSum, xxh(c.subspan(payload_offset)));
  store(r, kOffHeaderSum, xxh(c.first(kOffHeaderSum)));
}

std::string_view fault_name(RecordFault f) {
  switch (f) {
    case RecordFault::kNone: return "none";
    case RecordFault::kTruncated: return "truncated";
    case RecordFault::kBadMagic: return "bad_magic";
    case RecordFault::kHeaderChecksum: return "header_checksum";
    case RecordFault::kPayloadChecksum: return "payload_checksum";
    case RecordFault::kWrongModel: return "wrong_model";
    case RecordFault::kWrongLayout: return "wrong_layout";
    case RecordFault::kWrongBlockSize: return "wrong_block_size";
    case RecordFault::kWrongType: return "wrong_type";
    case RecordFault::kWrongKey: return "wrong_key";
    case RecordFault::kWrongTokens: return "wrong_tokens";
  }
  return "unknown";
}

RecordFault check_record(std::span<const std::byte> r, const BlockKey& want, std::span<const TokenId> tokens,
                         const KvIdentity& id) {
  Extent e;
  if (const RecordFault f = check_frame(r, &e); f != RecordFault::kNone) return f;
  const KvIdentity got = identity_of(r);
  if (got.block_size != id.block_size) return RecordFault::kWrongBlockSize;
  if (got.kv_type != id.kv_type) return RecordFault::kWrongType;
  if (got.n_layers != id.n_layers || got.n_kv_heads != id.n_kv_heads || got.head_dim != id.head_dim ||
      got.hash_scheme != id.hash_scheme || !id.valid() ||
      load<uint64_t>(r, kOffPayloadBytes) != static_cast<uint64_t>(id.payload_bytes()))
    return RecordFault::kWrongLayout;
  if (got.model != id.model) return RecordFault::kWrongModel;
  if (load128(r, kOffHash) != want.hash || load128(r, kOffParent) != want.parent || load128(r, kOffScope) != want.scope ||
      load<int32_t>(r, kOffDepth) != want.depth)
    return RecordFault::kWrongKey;
  if (tokens.size() != static_cast<size_t>(id.block_size) ||
      (!tokens.empty() && std::memcmp(r.data() + kRecordHeaderBytes, tokens.data(), tokens.size_bytes()) != 0))
    return RecordFault::kWrongTokens;
  if (xxh(r.subspan(e.payload_offset)) != load<uint64_t>(r, kOffPayloadSum)) return RecordFault::kPayloadChecksum;
  return RecordFault::kNone;
}

std::optional<RecordHeader> read_record_header(std::span<const std::byte> r) {
  Extent e;
  if (check_frame(r, &e) != RecordFault::kNone) return std::nullopt;
  RecordHeader h;
  h.key.hash = load128(r, kOffHash);
  h.key.parent = load128(r, kOffParent);
  h.key.scope = load128(r, kOffScope);
  h.key.depth = load<int32_t>(r, kOffDepth);
  h.owner = load<uint64_t>(r, kOffOwner);
  h.identity = identity_of(r);
  // A header this build cannot interpret (an unknown element type, a payload
  // size its dimensions do not give) describes no record it could restore.
  if (!h.identity.valid() || static_cast<uint64_t>(h.identity.payload_bytes()) != load<uint64_t>(r, kOffPayloadBytes))
    return std::nullopt;
  return h;
}

}  // namespace kvgate::cache
