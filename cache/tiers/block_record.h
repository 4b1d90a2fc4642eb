// Block records: how every tier below the device stores one KV block. The
// same bytes live in a host slot and as a RocksDB value, so moving a block
// host -> disk is a byte copy and every restore verifies it the same way.
//
// Layout (all integers little-endian):
//
//   offset  size
//        0     4  magic "KVGB"
//        4     2  format version (1)
//        6     2  fixed header size (kRecordHeaderBytes)
//        8    16  key.hash   (lo, hi)
//       24    16  key.parent (lo, hi)
//       40    16  key.scope  (lo, hi)
//       56    16  identity.model (lo, hi)
//       72     8  owner TenantId
//       80     4  key.depth
//       84     4  n_layers      88  4 n_kv_heads   92  4 head_dim
//       96     4  block_size   100  4 hash_scheme 104  1 kv_type
//      105     7  reserved (zero)
//      112     8  payload bytes
//      120     8  XXH3-64 of the token region (tokens and padding)
//      128     8  XXH3-64 of the payload
//      136     8  XXH3-64 of bytes [0, 136), computed last
//      144        block_size token ids (int32), then zeros up to a multiple of 64
//   payload_offset  the payload: the block's K/V bytes, opaque here
//
// The payload starts 64-byte aligned relative to the record, so a record
// buffer that is itself aligned gives the device copy an aligned source.
//
// The header checksum covers every header field (the token and payload
// checksums included), so the sizes are trusted only after it verified:
// a record shorter or longer than its header says is kTruncated, never read
// past. Reserved bytes and padding must be zero as seal_record writes them,
// so a record that checks clean is the one sealing its fields would give
// (checksums are no defence against a writer that forges them). Parsing is
// by memcpy from the span; no input is undefined behaviour
// (tests/fuzz/block_record_fuzz.cpp).
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "cache/block_pool.h"
#include "cache/hash128.h"
#include "cache/ids.h"
#include "cache/tiers/kv_identity.h"

namespace kvgate::cache {

inline constexpr size_t kRecordHeaderBytes = 144;
inline constexpr uint16_t kRecordVersion = 1;

// The byte offset of the payload in a record of `block_size` tokens.
size_t record_payload_offset(int32_t block_size);
// The whole record's size for blocks of this identity (0 for an invalid identity).
size_t record_bytes(const KvIdentity& id);

// The payload region of a record buffer (record_bytes(id) long): the caller
// copies the block's K/V here first (straight from the device, no extra
// copy), then seals. Throws std::invalid_argument for a span of another size.
std::span<std::byte> record_payload(std::span<std::byte> record, const KvIdentity& id);
std::span<const std::byte> record_payload(std::span<const std::byte> record, const KvIdentity& id);

// Writes header and tokens (block_size of them) around the payload already in
// place and computes the checksums over what is there. Throws
// std::invalid_argument for a span of the wrong size, the wrong number of
// tokens or an invalid identity.
void seal_record(std::span<std::byte> record, const BlockKey& key, TenantId owner, const KvIdentity& id,
                 std::span<const TokenId> tokens);

enum class RecordFault : uint8_t {
  kNone,
  kTruncated,        // shorter than a header, or than (or longer than) its header says
  kBadMagic,         // not a record, or a format version this build does not read
  kHeaderChecksum,   // the header or the token region was damaged
  kPayloadChecksum,  // the K/V bytes were damaged
  kWrongModel,       // another model fingerprint
  kWrongLayout,      // layers, KV heads, head dim, hash scheme or payload size differ
  kWrongBlockSize,
  kWrongType,        // another KV element type
  kWrongKey,         // hash, parent, scope or depth differ from what the lookup asked for
  kWrongTokens,      // the block holds other tokens (a hash collision)
};
inline constexpr int kRecordFaultCount = 11;

// "none", "truncated", "bad_magic", "header_checksum", "payload_checksum",
// "wrong_model", "wrong_layout", "wrong_block_size", "wrong_type",
// "wrong_key", "wrong_tokens": metric label values.
std::string_view fault_name(RecordFault f);

// Verifies everything, in this order: size, magic and version, header
// checksum, reserved bytes zero, the size the header claims, the token
// region's checksum and zero padding, the
// identity field by field (block size, element type, layout, then the model,
// so the fault names the most specific difference: the model fingerprint
// itself hashes the element type), the key (hash, parent, scope, depth), the
// tokens, the payload checksum. kNone = safe to restore.
RecordFault check_record(std::span<const std::byte> record, const BlockKey& want, std::span<const TokenId> tokens,
                         const KvIdentity& id);

// The header only (size, magic, header checksum, claimed size, token
// checksum; not the payload's), for index rebuilds and the fuzzer. Also
// nothing for a header of an identity this build cannot interpret (an
// unknown element type, a payload size its dimensions do not give): a
// header returned describes a record of exactly record_bytes(identity).
struct RecordHeader {
  BlockKey key;
  TenantId owner = 0;
  KvIdentity identity;
};
std::optional<RecordHeader> read_record_header(std::span<const std::byte> record);

}  // namespace kvgate::cache
