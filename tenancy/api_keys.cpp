// Invariants:
//  - the plaintext key never reaches RocksDB; only key_digest(key) does;
//  - kKeyDigests holds an entry exactly for the keys that are active: revoke
//    and rotate delete it in the same synced batch that marks the key
//    revoked, so a key stops working the moment the call returns;
//  - digests are compared with CRYPTO_memcmp. The digest-index lookup itself
//    is not constant time, but it is keyed by SHA-256 of the presented key,
//    which an attacker cannot steer towards a stored digest.
// Thread-safety: authenticate() only reads; revoke/rotate hold write_mu_.
#include "tenancy/api_keys.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tenancy/random_bytes.h"

namespace kvgate::tenancy {
namespace {

constexpr size_t kDigestBytes = 32;

// An API key record's one field list, in on-disk order (codec.h).
struct ApiKeyFields {
  using Record = ApiKeyInfo;
  static constexpr uint8_t kFormat = 1;
  static constexpr const char* kWhat = "api key";
  template <class R, class Field>
  static void visit(R& k, Field& f) {
    f(k.key_id);
    f(k.tenant_id);
    f(k.label);
    f(k.digest);
    f(k.created_ns);
    f(k.revoked_ns);
    f(k.replaced_by);
  }
};

std::string key_ref(std::string_view tenant_id, std::string_view key_id) {
  std::string k(tenant_id);
  k.push_back('\0');
  k.append(key_id);
  return k;
}

std::string base64url(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(raw.data()),
                                static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string hex(const std::string& raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Cheap shape check so garbage never costs a hash and two lookups.
bool looks_like_key(std::string_view k) {
  const size_t body = (kKeyRandomBytes * 4 + 2) / 3;  // unpadded base64 length
  if (k.size() != kKeyPrefix.size() + body || k.substr(0, kKeyPrefix.size()) != kKeyPrefix) {
    return false;
  }
  for (char c : k.substr(kKeyPrefix.size())) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string key_digest(std::string_view key) {
  std::string md(kDigestBytes, '\0');
  unsigned int len = 0;
  if (EVP_Digest(key.data(), key.size(), reinterpret_cast<unsigned char*>(md.data()), &len,
                 EVP_sha256(), nullptr) != 1 ||
      len != kDigestBytes) {
    throw Error(ErrorCode::kIo, "SHA-256 failed");
  }
  return md;
}

std::string encode_api_key(const ApiKeyInfo& k) { return encode_record<ApiKeyFields>(k); }

ApiKeyInfo decode_api_key(std::string_view v) {
  ApiKeyInfo k = decode_record<ApiKeyFields>(v);
  if (k.digest.size() != kDigestBytes) throw Error(ErrorCode::kCorrupt, "api key: bad digest size");
  return k;
}

IssuedKey ApiKeys::issue(std::string_view tenant_id, std::string_view label,
                         rocksdb::WriteBatch* batch) {
  if (!tenants_.find(tenant_id)) {
    throw Error(ErrorCode::kNotFound, "no tenant '" + std::string(tenant_id) + "'");
  }
  IssuedKey out;
  out.plaintext = std::string(kKeyPrefix) + base64url(random_bytes(kKeyRandomBytes));
  out.info.key_id = "key_" + hex(random_bytes(8));
  out.info.tenant_id = std::string(tenant_id);
  out.info.label = std::string(label);
  out.info.digest = key_digest(out.plaintext);
  out.info.created_ns = clock_.now_ns();
  const std::string ref = key_ref(tenant_id, out.info.key_id);
  check_status(batch->Put(store_.cf(Family::kApiKeys), ref, encode_api_key(out.info)), "api key");
  check_status(batch->Put(store_.cf(Family::kKeyDigests), out.info.digest, ref), "key digest");
  return out;
}

IssuedKey ApiKeys::create(std::string_view tenant_id, std::string_view label) {
  rocksdb::WriteBatch batch;
  IssuedKey key = issue(tenant_id, label, &batch);
  store_.write(&batch, /*sync=*/true);
  return key;
}

ApiKeyInfo ApiKeys::load(std::string_view tenant_id, std::string_view key_id) const {
  std::optional<std::string> v = store_.get(Family::kApiKeys, key_ref(tenant_id, key_id));
  if (!v) {
    throw Error(ErrorCode::kNotFound, "tenant '" + std::string(tenant_id) + "' has no key '" +
                                          std::string(key_id) + "'");
  }
  return decode_api_key(*v);
}

std::vector<ApiKeyInfo> ApiKeys::list(std::string_view tenant_id) const {
  const std::string prefix = key_ref(tenant_id, "");
  std::vector<ApiKeyInfo> out;
  std::unique_ptr<rocksdb::Iterator> it(
      store_.db()->NewIterator(rocksdb::ReadOptions(), store_.cf(Family::kApiKeys)));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    out.push_back(decode_api_key(it->value().ToStringView()));
  }
  check_status(it->status(), "listing api keys");
  return out;
}

void ApiKeys::revoke(std::string_view tenant_id, std::string_view key_id) {
  MutexLock lock(write_mu_);
  ApiKeyInfo k = load(tenant_id, key_id);
  if (!k.active()) return;  // revoking twice is harmless
  k.revoked_ns = clock_.now_ns();
  rocksdb::WriteBatch batch;
  check_status(batch.Put(store_.cf(Family::kApiKeys), key_ref(tenant_id, key_id), encode_api_key(k)),
               "api key");
  check_status(batch.Delete(store_.cf(Family::kKeyDigests), k.digest), "key digest");
  store_.write(&batch, /*sync=*/true);
}

IssuedKey ApiKeys::rotate(std::string_view tenant_id, std::string_view key_id) {
  MutexLock lock(write_mu_);
  ApiKeyInfo old = load(tenant_id, key_id);
  if (!old.active()) {
    throw Error(ErrorCode::kInvalidArgument, "key '" + std::string(key_id) + "' is revoked");
  }
  rocksdb::WriteBatch batch;
  IssuedKey fresh = issue(tenant_id, old.label, &batch);
  old.revoked_ns = fresh.info.created_ns;
  old.replaced_by = fresh.info.key_id;
  check_status(batch.Put(store_.cf(Family::kApiKeys), key_ref(tenant_id, key_id),
                         encode_api_key(old)),
               "api key");
  check_status(batch.Delete(store_.cf(Family::kKeyDigests), old.digest), "key digest");
  store_.write(&batch, /*sync=*/true);
  return fresh;
}

std::optional<Principal> ApiKeys::authenticate(std::string_view presented) const {
  if (!looks_like_key(presented)) return std::nullopt;
  const std::string digest = key_digest(presented);
  std::optional<std::string> ref = store_.get(Family::kKeyDigests, digest);
  if (!ref) return std::nullopt;
  std::optional<std::string> stored = store_.get(Family::kApiKeys, *ref);
  if (!stored) return std::nullopt;
  const ApiKeyInfo k = decode_api_key(*stored);
  if (!k.active() || CRYPTO_memcmp(k.digest.data(), digest.data(), kDigestBytes) != 0) {
    return std::nullopt;
  }
  std::optional<Tenant> tenant = tenants_.find(k.tenant_id);
  if (!tenant || tenant->status != TenantStatus::kActive) return std::nullopt;
  return Principal{std::move(*tenant), k.key_id};
}

}  // namespace kvgate::tenancy
