#include "cache/tiers/redis_seal.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "base/error.h"
#include "base/private_file.h"

namespace kvgate::cache {
namespace {

constexpr char kMagic[4] = {'K', 'V', 'G', 'S'};
constexpr uint8_t kVersion = 1;
constexpr size_t kNonceBytes = 12, kTagBytes = 16, kHeadBytes = 4 + 1 + 4 + kNonceBytes;

bool parse_key_hex(std::string_view hex, SealKey* out) {
  if (hex.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    int v = 0;
    for (const char c : hex.substr(2 * i, 2)) {
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    (*out)[i] = static_cast<uint8_t>(v);
  }
  return true;
}

struct CipherFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Cipher = std::unique_ptr<EVP_CIPHER_CTX, CipherFree>;

const unsigned char* u8(const void* p) { return static_cast<const unsigned char*>(p); }
unsigned char* u8(void* p) { return static_cast<unsigned char*>(p); }

}  // namespace

RedisKeys read_redis_keys(const std::string& path) {
  require_private_file(path, "the Redis tier's key file");
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the Redis tier's key file");
  RedisKeys k;
  bool names = false;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string kind, a, b, extra;
    if (!(words >> kind)) continue;
    words >> a >> b >> extra;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (kind == "names" && b.empty() && parse_key_hex(a, &k.names)) {
      if (names) throw Error(where + "a second names line");
      names = true;
    } else if (kind == "key" && extra.empty()) {
      SealKey key{};
      uint32_t id = 0;
      const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), id);
      if (ec != std::errc() || end != a.data() + a.size() || !parse_key_hex(b, &key))
        throw Error(where + "expected \"key <id> <64 hex digits>\"");
      for (const auto& [other, unused] : k.keys)
        if (other == id) throw Error(where + "key id " + a + " appears twice");
      k.keys.emplace_back(id, key);
    } else {
      throw Error(where + "expected \"names <64 hex digits>\" or \"key <id> <64 hex digits>\"");
    }
  }
  if (!names) throw Error(path + ": no \"names <64 hex digits>\" line");
  if (k.keys.empty()) throw Error(path + ": no \"key <id> <64 hex digits>\" line");
  return k;
}

RedisSeal::RedisSeal(RedisKeys keys) : keys_(std::move(keys)) {
  if (keys_.keys.empty()) throw std::invalid_argument("redis seal: no key");
}

std::vector<std::byte> RedisSeal::seal(std::span<const std::byte> record, std::string_view name) const {
  const auto& [id, key] = keys_.keys.front();
  std::vector<std::byte> out(kHeadBytes + record.size() + kTagBytes);
  std::memcpy(out.data(), kMagic, 4);
  out[4] = std::byte{kVersion};
  for (int i = 0; i < 4; ++i) out[5 + static_cast<size_t>(i)] = std::byte(static_cast<uint8_t>(id >> (8 * i)));
  unsigned char* nonce = u8(out.data() + 9);
  if (RAND_bytes(nonce, kNonceBytes) != 1) throw Error("redis seal: no random bytes for a nonce");
  const Cipher c(EVP_CIPHER_CTX_new());
  int n = 0;
  if (!c || EVP_EncryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key.data(), nonce) != 1 ||
      EVP_EncryptUpdate(c.get(), nullptr, &n, u8(name.data()), static_cast<int>(name.size())) != 1 ||
      EVP_EncryptUpdate(c.get(), u8(out.data() + kHeadBytes), &n, u8(record.data()), static_cast<int>(record.size())) != 1 ||
      EVP_EncryptFinal_ex(c.get(), u8(out.data() + kHeadBytes + record.size()), &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, out.data() + kHeadBytes + record.size()) != 1)
    throw Error("redis seal: AES-256-GCM failed");
  return out;
}

std::optional<std::vector<std::byte>> RedisSeal::open(std::span<const std::byte> value, std::string_view name) const {
  if (value.size() < kOverheadBytes || std::memcmp(value.data(), kMagic, 4) != 0 || value[4] != std::byte{kVersion})
    return std::nullopt;
  uint32_t id = 0;
  for (int i = 0; i < 4; ++i) id |= static_cast<uint32_t>(value[5 + static_cast<size_t>(i)]) << (8 * i);
  const SealKey* key = nullptr;
  for (const auto& [held, k] : keys_.keys)
    if (held == id) key = &k;
  if (!key) return std::nullopt;
  const size_t n_plain = value.size() - kOverheadBytes;
  std::vector<std::byte> out(n_plain);
  std::array<unsigned char, kTagBytes> tag{};
  std::memcpy(tag.data(), value.data() + kHeadBytes + n_plain, kTagBytes);
  const Cipher c(EVP_CIPHER_CTX_new());
  int n = 0;
  const bool ok =
      c && EVP_DecryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key->data(), u8(value.data() + 9)) == 1 &&
      EVP_DecryptUpdate(c.get(), nullptr, &n, u8(name.data()), static_cast<int>(name.size())) == 1 &&
      EVP_DecryptUpdate(c.get(), u8(out.data()), &n, u8(value.data() + kHeadBytes), static_cast<int>(n_plain)) == 1 &&
      EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
      EVP_DecryptFinal_ex(c.get(), u8(out.data() + n_plain), &n) == 1;
  if (!ok) return std::nullopt;
  return out;
}

Hash128 RedisSeal::tag(std::span<const std::byte> data) const {
  std::array<unsigned char, 32> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), keys_.names.data(), static_cast<int>(keys_.names.size()), u8(data.data()), data.size(), mac.data(),
       &len);
  Hash128 h;
  std::memcpy(&h.lo, mac.data(), 8);
  std::memcpy(&h.hi, mac.data() + 8, 8);
  return h;
}

}  // namespace kvgate::cache
