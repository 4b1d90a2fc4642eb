// API keys: "kvg-" followed by 32 random bytes in unpadded base64url. The
// plaintext is returned once, at creation or rotation; at rest only its
// SHA-256 digest is kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenancy/clock.h"
#include "base/mutex.h"
#include "tenancy/store.h"
#include "tenancy/tenant.h"
#include "tenancy/tenant_registry.h"

namespace kvgate::tenancy {

constexpr std::string_view kKeyPrefix = "kvg-";
constexpr size_t kKeyRandomBytes = 32;

// What is stored about a key (no secret in it).
struct ApiKeyInfo {
  std::string key_id;  // "key_" + 16 hex digits; public, safe to log
  std::string tenant_id;
  std::string label;
  std::string digest;  // SHA-256 of the full key string, 32 bytes
  int64_t created_ns = 0;
  int64_t revoked_ns = 0;    // 0 while active
  std::string replaced_by;   // key id of the successor after rotate()

  bool active() const { return revoked_ns == 0; }
  bool operator==(const ApiKeyInfo&) const = default;
};

struct IssuedKey {
  ApiKeyInfo info;
  std::string plaintext;  // show to the user once, then forget
};

// Who a request is from, once its key checks out.
struct Principal {
  Tenant tenant;
  std::string key_id;
};

class ApiKeys {
 public:
  ApiKeys(Store& store, const TenantRegistry& tenants, const WallClock& clock)
      : store_(store), tenants_(tenants), clock_(clock) {}

  IssuedKey create(std::string_view tenant_id, std::string_view label);
  std::vector<ApiKeyInfo> list(std::string_view tenant_id) const;
  // Effective immediately: the next authenticate() with this key fails.
  void revoke(std::string_view tenant_id, std::string_view key_id) ABSL_LOCKS_EXCLUDED(write_mu_);
  // Issues a new key with the same label and revokes the old one, atomically.
  IssuedKey rotate(std::string_view tenant_id, std::string_view key_id)
      ABSL_LOCKS_EXCLUDED(write_mu_);

  // The tenant and key id for an active key of an active tenant; nullopt for
  // anything else (unknown, malformed, revoked, suspended tenant), without
  // saying which, so a prober learns nothing.
  std::optional<Principal> authenticate(std::string_view presented_key) const;

 private:
  ApiKeyInfo load(std::string_view tenant_id, std::string_view key_id) const;
  IssuedKey issue(std::string_view tenant_id, std::string_view label, rocksdb::WriteBatch* batch);

  Store& store_;
  const TenantRegistry& tenants_;
  const WallClock& clock_;
  // Serialises revoke/rotate read-modify-write. What it guards lives in
  // RocksDB, not in a field, so nothing here is ABSL_GUARDED_BY.
  Mutex write_mu_;
};

// The SHA-256 digest of a key string (32 raw bytes).
std::string key_digest(std::string_view key);

std::string encode_api_key(const ApiKeyInfo& k);
ApiKeyInfo decode_api_key(std::string_view v);

}  // namespace kvgate::tenancy
