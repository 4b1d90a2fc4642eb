#include "gateway/cluster/wire/event_keys.h"

#include <openssl/sha.h>
#include <zmq.h>

#include <array>
#include <cstdint>

#include "base/error.h"

namespace kvgate::wire {
namespace {

// Z85 of SHA-256(label \0 token): a Curve25519 secret key (any 32 bytes
// are one; the curve clamps them).
std::string derived_secret(std::string_view label, std::string_view token) {
  std::string input(label);
  input.push_back('\0');
  input.append(token);
  std::array<uint8_t, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest.data());
  std::array<char, 41> z85{};
  if (!zmq_z85_encode(z85.data(), digest.data(), digest.size())) throw Error("block events: cannot encode a CURVE key");
  return z85.data();
}

std::string public_of(const std::string& secret) {
  std::array<char, 41> pub{};
  if (zmq_curve_public(pub.data(), secret.c_str()) != 0)
    throw Error(std::string("block events: cannot derive a CURVE public key: ") + zmq_strerror(zmq_errno()));
  return pub.data();
}

}  // namespace

EventCurveKeys event_curve_keys(std::string_view internal_token) {
  if (!zmq_has("curve"))
    throw Error("block events: this libzmq has no CURVE security, which the block-event socket needs");
  EventCurveKeys k;
  k.server_secret = derived_secret("kvgate block events: replica", internal_token);
  k.client_secret = derived_secret("kvgate block events: front", internal_token);
  k.server_public = public_of(k.server_secret);
  k.client_public = public_of(k.client_secret);
  return k;
}

std::string z85_key_bytes(const std::string& z85) {
  std::array<uint8_t, 32> bytes{};
  if (z85.size() != 40 || !zmq_z85_decode(bytes.data(), z85.c_str()))
    throw Error("block events: a CURVE key is not 40 characters of Z85");
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace kvgate::wire
