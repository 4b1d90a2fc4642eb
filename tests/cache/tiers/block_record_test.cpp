#include "cache/tiers/block_record.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tests/cache/tiers/tier_test_support.h"

namespace kvgate::cache {
namespace {

using testing::key_at;
using testing::record_for;
using testing::scope_of;
using testing::small_identity;
using testing::tokens_for;
using testing::verify;

TEST(BlockRecord, SizesFollowTheIdentity) {
  const KvIdentity id = small_identity();
  EXPECT_EQ(id.payload_bytes(), 2 * 2 * 2 * 8 * 2 * 4);
  EXPECT_EQ(record_payload_offset(4), 192u);  // 144 + 16, aligned to 64
  EXPECT_EQ(record_bytes(id), 192u + 512u);
  KvIdentity f32 = id;
  f32.kv_type = 0;
  EXPECT_EQ(f32.payload_bytes(), 2 * id.payload_bytes());
  KvIdentity bad = id;
  bad.kv_type = 9;
  EXPECT_EQ(bad.payload_bytes(), 0);
  EXPECT_EQ(record_bytes(bad), 0u);
  bad = id;
  bad.n_layers = 0;
  EXPECT_FALSE(bad.valid());
}

TEST(BlockRecord, IdentityDigestSeesEveryField) {
  const KvIdentity id = small_identity();
  std::set<uint64_t> digests{identity_digest(id)};
  auto differ = [&](auto change) {
    KvIdentity o = id;
    change(o);
    EXPECT_TRUE(digests.insert(identity_digest(o)).second);
  };
  differ([](KvIdentity& o) { o.model.lo ^= 1; });
  differ([](KvIdentity& o) { o.model.hi ^= 1; });
  differ([](KvIdentity& o) { o.n_layers += 1; });
  differ([](KvIdentity& o) { o.n_kv_heads += 1; });
  differ([](KvIdentity& o) { o.head_dim += 1; });
  differ([](KvIdentity& o) { o.kv_type = 2; });
  differ([](KvIdentity& o) { o.block_size = 16; });
  differ([](KvIdentity& o) { o.hash_scheme = 2; });
  EXPECT_EQ(identity_digest(id), identity_digest(small_identity()));
}

TEST(BlockRecord, RoundTrip) {
  const KvIdentity id = small_identity();
  const BlockKey k = key_at(scope_of(7), 3);
  std::vector<std::byte> rec = record_for(k, 42, id);
  EXPECT_EQ(verify(rec, k, id), RecordFault::kNone);

  const std::optional<RecordHeader> h = read_record_header(rec);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->key.hash, k.hash);
  EXPECT_EQ(h->key.parent, k.parent);
  EXPECT_EQ(h->key.scope, k.scope);
  EXPECT_EQ(h->key.depth, 3);
  EXPECT_EQ(h->owner, 42u);
  EXPECT_EQ(h->identity, id);

  // The payload region is what the caller wrote, untouched by sealing.
  std::vector<std::byte> want(static_cast<size_t>(id.payload_bytes()));
  testing::fill_payload(want, k);
  const std::span<const std::byte> p = record_payload(std::span<const std::byte>(rec), id);
  ASSERT_EQ(p.size(), want.size());
  EXPECT_EQ(std::memcmp(p.data(), want.data(), want.size()), 0);
  EXPECT_EQ((p.data() - rec.data()) % 64, 0);
}

TEST(BlockRecord, SealRefusesMisuse) {
  const KvIdentity id = small_identity();
  const BlockKey k = key_at(scope_of(1), 0);
  std::vector<std::byte> rec(record_bytes(id));
  std::vector<TokenId> t = tokens_for(k, id.block_size);
  std::vector<std::byte> small(rec.size() - 1);
  EXPECT_THROW(seal_record(small, k, 1, id, t), std::invalid_argument);
  EXPECT_THROW(record_payload(std::span<std::byte>(small), id), std::invalid_argument);
  t.pop_back();
  EXPECT_THROW(seal_record(rec, k, 1, id, t), std::invalid_argument);
  KvIdentity bad = id;
  bad.kv_type = 7;
  EXPECT_THROW(seal_record(rec, k, 1, bad, tokens_for(k, 4)), std::invalid_argument);
}

// Each damage is named by the fault a metric would count it under.
TEST(BlockRecord, EachDamageHasItsFault) {
  const KvIdentity id = small_identity();
  const BlockKey k = key_at(scope_of(7), 2);
  const std::vector<std::byte> good = record_for(k, 42, id);
  auto flipped = [&](size_t at) {
    std::vector<std::byte> r = good;
    r[at] ^= std::byte{0x10};
    return r;
  };
  const size_t payload_at = record_payload_offset(id.block_size);

  EXPECT_EQ(verify(flipped(payload_at), k, id), RecordFault::kPayloadChecksum);
  EXPECT_EQ(verify(flipped(good.size() - 1), k, id), RecordFault::kPayloadChecksum);
  for (size_t at : {8u, 30u, 60u, 73u, 81u, 97u, 113u, 121u, 129u, 137u})  // header fields and checksums
    EXPECT_EQ(verify(flipped(at), k, id), RecordFault::kHeaderChecksum) << "byte " << at;
  EXPECT_EQ(verify(flipped(kRecordHeaderBytes + 1), k, id), RecordFault::kHeaderChecksum);  // a token
  EXPECT_EQ(verify(flipped(payload_at - 1), k, id), RecordFault::kHeaderChecksum);          // the padding
  EXPECT_EQ(verify(flipped(0), k, id), RecordFault::kBadMagic);
  EXPECT_EQ(verify(flipped(4), k, id), RecordFault::kBadMagic);  // the version

  for (size_t n : {size_t{0}, size_t{10}, kRecordHeaderBytes - 1, kRecordHeaderBytes, payload_at, good.size() - 1}) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(verify(cut, k, id), RecordFault::kTruncated) << n << " bytes";
    EXPECT_FALSE(read_record_header(cut)) << n << " bytes";
  }
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_EQ(verify(longer, k, id), RecordFault::kTruncated);

  auto written_under = [&](auto change) {
    KvIdentity other = id;
    change(other);
    return verify(record_for(k, 42, other), k, id);
  };
  EXPECT_EQ(written_under([](KvIdentity& o) { o.model.hi ^= 1; }), RecordFault::kWrongModel);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.n_layers = 3; }), RecordFault::kWrongLayout);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.n_kv_heads = 1; }), RecordFault::kWrongLayout);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.head_dim = 4; }), RecordFault::kWrongLayout);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.hash_scheme = 2; }), RecordFault::kWrongLayout);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.block_size = 8; }), RecordFault::kWrongBlockSize);
  EXPECT_EQ(written_under([](KvIdentity& o) { o.kv_type = 2; }), RecordFault::kWrongType);  // bf16: same size
  EXPECT_EQ(written_under([](KvIdentity& o) { o.kv_type = 0; }), RecordFault::kWrongType);  // f32: twice the size
  // The fingerprint covers the element type, so in practice both differ: the type is named.
  EXPECT_EQ(written_under([](KvIdentity& o) { o.kv_type = 0, o.model.lo ^= 1; }), RecordFault::kWrongType);

  auto asked_for = [&](auto change) {
    BlockKey want = k;
    change(want);
    return check_record(good, want, tokens_for(k, id.block_size), id);
  };
  EXPECT_EQ(asked_for([](BlockKey& w) { w.hash.lo ^= 1; }), RecordFault::kWrongKey);
  EXPECT_EQ(asked_for([](BlockKey& w) { w.parent.hi ^= 1; }), RecordFault::kWrongKey);
  EXPECT_EQ(asked_for([](BlockKey& w) { w.scope.lo ^= 1; }), RecordFault::kWrongKey);
  EXPECT_EQ(asked_for([](BlockKey& w) { w.depth += 1; }), RecordFault::kWrongKey);

  std::vector<TokenId> other = tokens_for(k, id.block_size);
  other[3] += 1;
  EXPECT_EQ(check_record(good, k, other, id), RecordFault::kWrongTokens);
  other.pop_back();
  EXPECT_EQ(check_record(good, k, other, id), RecordFault::kWrongTokens);
  EXPECT_EQ(check_record(good, k, {}, id), RecordFault::kWrongTokens);

  EXPECT_EQ(verify(good, k, id), RecordFault::kNone);
}

// Recomputes the token and header checksums after an edit, as a writer that
// forges them would (libFuzzer's comparison tracing finds such values).
void reseal_checksums(std::vector<std::byte>& r, size_t payload_at) {
  const uint64_t tokens = XXH3_64bits(r.data() + kRecordHeaderBytes, payload_at - kRecordHeaderBytes);
  std::memcpy(r.data() + 120, &tokens, 8);
  const uint64_t header = XXH3_64bits(r.data(), 136);
  std::memcpy(r.data() + 136, &header, 8);
}

// Checksums that verify prove nothing about bytes sealing never writes: a
// record with reserved bytes or padding set, or dimensions whose product
// overflows, is refused, never re-sealed into different bytes or multiplied.
TEST(BlockRecord, ForgedChecksumsDoNotMakeAnUnsealableRecordClean) {
  const KvIdentity id = small_identity();
  const BlockKey k = key_at(scope_of(7), 2);
  const std::vector<std::byte> good = record_for(k, 42, id);
  const size_t payload_at = record_payload_offset(id.block_size);
  auto forged = [&](size_t at, std::byte v) {
    std::vector<std::byte> r = good;
    r[at] = v;
    reseal_checksums(r, payload_at);
    return r;
  };
  std::vector<std::byte> same = forged(0, good[0]);
  EXPECT_EQ(verify(same, k, id), RecordFault::kNone);  // the forging itself is faithful

  for (size_t at = 105; at < 112; ++at) {
    const std::vector<std::byte> r = forged(at, std::byte{1});
    EXPECT_EQ(verify(r, k, id), RecordFault::kBadMagic) << "reserved byte " << at;
    EXPECT_FALSE(read_record_header(r)) << "reserved byte " << at;
  }
  const std::vector<std::byte> padded = forged(payload_at - 1, std::byte{1});
  EXPECT_EQ(verify(padded, k, id), RecordFault::kHeaderChecksum);
  EXPECT_FALSE(read_record_header(padded));

  // 2^30 layers x 2^30 heads x ...: past int64, so no identity, no header.
  std::vector<std::byte> huge = good;
  const int32_t big = 1 << 30;
  for (size_t at : {84u, 88u, 92u}) std::memcpy(huge.data() + at, &big, 4);
  reseal_checksums(huge, payload_at);
  EXPECT_FALSE(read_record_header(huge));
  EXPECT_EQ(verify(huge, k, id), RecordFault::kWrongLayout);
  KvIdentity over = id;
  over.n_layers = over.n_kv_heads = over.head_dim = big;
  EXPECT_EQ(over.payload_bytes(), 0);
  EXPECT_FALSE(over.valid());
}

TEST(BlockRecord, HeaderReadIgnoresThePayloadOnly) {
  const KvIdentity id = small_identity();
  const BlockKey k = key_at(scope_of(3), 0);
  std::vector<std::byte> rec = record_for(k, 5, id);
  rec.back() ^= std::byte{1};
  EXPECT_TRUE(read_record_header(rec));  // payload damage: the header is still readable
  rec[20] ^= std::byte{1};
  EXPECT_FALSE(read_record_header(rec));
}

TEST(BlockRecord, FaultNamesAreDistinctLabels) {
  std::set<std::string> names;
  for (int f = 0; f < kRecordFaultCount; ++f) {
    const std::string n(fault_name(static_cast<RecordFault>(f)));
    EXPECT_NE(n, "unknown");
    EXPECT_EQ(n.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << n;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_EQ(fault_name(RecordFault::kPayloadChecksum), "payload_checksum");
  EXPECT_EQ(fault_name(RecordFault::kTruncated), "truncated");
  EXPECT_EQ(fault_name(RecordFault::kBadMagic), "bad_magic");
}

}  // namespace
}  // namespace kvgate::cache
