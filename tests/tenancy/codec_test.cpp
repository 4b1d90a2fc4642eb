// The on-disk bytes of every tenancy record, pinned field by field. The hex
// was produced by the original hand-written encoders (format 1 of each
// record), so any rework of the codecs must reproduce it byte for byte.
// Every field holds a distinct value, so a swapped, dropped or resized field
// shows up here. If one fails, stores written by earlier builds no longer
// decode: bump the record's format byte and keep a reader for the old one
// rather than editing the hex.
#include <gtest/gtest.h>

#include <string>

#include "tenancy/api_keys.h"
#include "tenancy/error.h"
#include "tenancy/ledger_record.h"
#include "tenancy/prices.h"
#include "tenancy/tenant.h"

namespace kvgate::tenancy {
namespace {

std::string hex(const std::string& raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

Tenant sample_tenant() {
  Tenant t;
  t.id = "acme";
  t.name = "Acme";
  t.org_id = "org1";
  t.status = TenantStatus::kSuspended;
  t.share_org_scope = true;
  t.own_scope = std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\xff", 16);
  t.plan_id = "std";
  t.quotas.requests_per_minute = 0x11;
  t.quotas.tokens_per_minute = 0x2222;
  t.quotas.max_concurrent_requests = 0x33;
  t.quotas.monthly_spend_cap_micros = 0x0102030405060708;
  t.quotas.max_cached_kv_blocks = 0x55;
  t.quotas.cached_token_weight_permille = 0x0266;  // 614
  t.quotas.max_pinned_kv_blocks = 0x77;
  t.created_ns = 1'700'000'000'123'456'789;
  return t;
}

ApiKeyInfo sample_key() {
  ApiKeyInfo k;
  k.key_id = "key_0123456789abcdef";
  k.tenant_id = "acme";
  k.label = "ci";
  k.digest = std::string(32, '\xd5');
  k.created_ns = 1'700'000'000'000'000'001;
  k.revoked_ns = 1'700'000'000'000'000'002;
  k.replaced_by = "key_fedcba9876543210";
  return k;
}

PricePlan sample_plan() { return PricePlan{"std", 3'000'000, 300'000, 3'750'000, 15'000'000, 3'750'000, 6'000'000}; }

LedgerRecord sample_record() {
  LedgerRecord r;
  r.request_id = "req-1";
  r.tenant_id = "acme";
  r.key_id = "key_0123456789abcdef";
  r.model = "llama-3-8b";
  r.arrival_ns = 1'700'000'000'000'000'010;
  r.first_token_ns = 1'700'000'000'000'000'020;
  r.finish_ns = 1'700'000'000'000'000'030;
  r.tokens.cached_device = 1;
  r.tokens.cached_host = 2;
  r.tokens.cached_disk = 3;
  r.tokens.fresh_prefill = 4;
  r.tokens.prompt_tokens = 10;
  r.tokens.cache_written = 5;
  r.tokens.output_tokens = 6;
  r.tokens.cache_write_5m = 1;
  r.tokens.cache_write_1h = 2;
  r.finish_reason = FinishReason::kCancelled;
  r.cost_micros = 0xc0de;
  return r;
}

TEST(Codec, TenantBytesArePinned) {
  const std::string format_1 =
      "01"                                          // format
      "04000000"                                    // id, 4 bytes
      "61636d65"
      "04000000"                                    // name, 4 bytes
      "41636d65"
      "04000000"                                    // org_id, 4 bytes
      "6f726731"
      "02"                                          // status (2: suspended)
      "01"                                          // share_org_scope
      "10000000"                                    // own_scope, 16 bytes
      "000102030405060708090a0b0c0d0eff"
      "03000000"                                    // plan_id, 3 bytes
      "737464"
      "1100000000000000"                            // requests_per_minute
      "2222000000000000"                            // tokens_per_minute
      "3300000000000000"                            // max_concurrent_requests
      "0807060504030201"                            // monthly_spend_cap_micros
      "5500000000000000"                            // max_cached_kv_blocks
      "66020000"                                    // cached_token_weight_permille
      "15cd853dfe9c9717";                           // created_ns
  const std::string pinned = "02" + format_1.substr(2) +
      "7700000000000000";                           // max_pinned_kv_blocks
  EXPECT_EQ(hex(encode_tenant(sample_tenant())), pinned);
  EXPECT_EQ(decode_tenant(unhex(pinned)), sample_tenant());
  // A tenant stored before its pin quota reads back with the server's default.
  Tenant old = sample_tenant();
  old.quotas.max_pinned_kv_blocks = 0;
  EXPECT_EQ(decode_tenant(unhex(format_1)), old);
}

TEST(Codec, ApiKeyBytesArePinned) {
  const std::string pinned =
      "01"                                          // format
      "14000000"                                    // key_id, 20 bytes
      "6b65795f30313233343536373839616263646566"
      "04000000"                                    // tenant_id, 4 bytes
      "61636d65"
      "02000000"                                    // label, 2 bytes
      "6369"
      "20000000"                                    // digest, 32 bytes
      "d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5"
      "01002a36fe9c9717"                            // created_ns
      "02002a36fe9c9717"                            // revoked_ns
      "14000000"                                    // replaced_by, 20 bytes
      "6b65795f66656463626139383736353433323130";
  EXPECT_EQ(hex(encode_api_key(sample_key())), pinned);
  EXPECT_EQ(decode_api_key(unhex(pinned)), sample_key());
}

TEST(Codec, PricePlanBytesArePinned) {
  const std::string format_1 =
      "01"                                          // format
      "03000000"                                    // id, 3 bytes
      "737464"
      "c0c62d0000000000"                            // fresh_input_per_mtok
      "e093040000000000"                            // cached_input_per_mtok
      "7038390000000000"                            // cache_write_per_mtok
      "c0e1e40000000000";                           // output_per_mtok
  const std::string pinned = "02" + format_1.substr(2) +
      "7038390000000000"                            // cache_write_5m_per_mtok
      "808d5b0000000000";                           // cache_write_1h_per_mtok
  EXPECT_EQ(hex(encode_plan(sample_plan())), pinned);
  EXPECT_EQ(decode_plan(unhex(pinned)), sample_plan());
  // A plan stored before the pinned-write prices reads back with their
  // defaults, 1.25x and 2x fresh (here the sample's own).
  EXPECT_EQ(decode_plan(unhex(format_1)), sample_plan());
}

TEST(Codec, LedgerRecordBytesArePinned) {
  const std::string format_1 =
      "01"                                          // format
      "05000000"                                    // request_id, 5 bytes
      "7265712d31"
      "04000000"                                    // tenant_id, 4 bytes
      "61636d65"
      "14000000"                                    // key_id, 20 bytes
      "6b65795f30313233343536373839616263646566"
      "0a000000"                                    // model, 10 bytes
      "6c6c616d612d332d3862"
      "0a002a36fe9c9717"                            // arrival_ns
      "14002a36fe9c9717"                            // first_token_ns
      "1e002a36fe9c9717"                            // finish_ns
      "0a00000000000000"                            // prompt_tokens
      "0100000000000000"                            // cached_device
      "0200000000000000"                            // cached_host
      "0300000000000000"                            // cached_disk
      "0400000000000000"                            // fresh_prefill
      "0500000000000000"                            // cache_written
      "0600000000000000"                            // output_tokens
      "03"                                          // finish_reason (3: cancelled)
      "dec0000000000000";                           // cost_micros
  const std::string pinned = "02" + format_1.substr(2) +
      "0100000000000000"                            // cache_write_5m
      "0200000000000000";                           // cache_write_1h
  EXPECT_EQ(hex(encode_ledger_record(sample_record())), pinned);
  EXPECT_EQ(decode_ledger_record(unhex(pinned)), sample_record());
  // A record written before the pinned writes reads back with none.
  LedgerRecord old = sample_record();
  old.tokens.cache_write_5m = old.tokens.cache_write_1h = 0;
  EXPECT_EQ(decode_ledger_record(unhex(format_1)), old);
}

// What each decoder refuses, and what it lets through, is part of the format.
TEST(Codec, DecodersRefuseCorruptRecords) {
  auto corrupt = [](auto decode, const std::string& v) {
    try {
      decode(v);
      ADD_FAILURE() << "decoded " << hex(v);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    }
  };
  const std::string plan = encode_plan(sample_plan());
  corrupt(decode_plan, plan.substr(0, plan.size() - 1));
  corrupt(decode_plan, plan + '\0');
  corrupt(decode_plan, '\x03' + plan.substr(1));  // a format this build does not read

  Tenant bad_status = sample_tenant();
  bad_status.status = static_cast<TenantStatus>(3);
  corrupt(decode_tenant, encode_tenant(bad_status));

  ApiKeyInfo short_digest = sample_key();
  short_digest.digest.pop_back();
  corrupt(decode_api_key, encode_api_key(short_digest));

  const std::string record = encode_ledger_record(sample_record());
  corrupt(decode_ledger_record, record.substr(0, record.size() - 8));
  corrupt(decode_ledger_record, '\x03' + record.substr(1));
  corrupt(decode_ledger_record, '\x01' + record.substr(1));  // format 1 is 16 bytes shorter
}

TEST(Codec, DecodersAcceptWhatTheyAlwaysAccepted) {
  // share_org_scope: any nonzero byte reads as true.
  std::string v = encode_tenant(sample_tenant());
  const size_t share_at = 1 + 3 * (4 + 4) + 1;  // format, id, name, org, status
  ASSERT_EQ(v[share_at], '\x01');
  v[share_at] = '\x07';
  EXPECT_TRUE(decode_tenant(v).share_org_scope);
  // The finish reason is range-checked when written (validate()), not read.
  LedgerRecord r = sample_record();
  r.finish_reason = static_cast<FinishReason>(9);
  EXPECT_EQ(decode_ledger_record(encode_ledger_record(r)), r);
}

}  // namespace
}  // namespace kvgate::tenancy
