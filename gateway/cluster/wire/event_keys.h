// The CURVE keys of the block-event socket, derived from the internal token
// (internal_token.h), so that whoever holds the token, and nobody else,
// reads a replica's block events, without another secret to hand out.
//
// A replica's PUB socket is the CURVE server: its events are encrypted on
// the wire, and its ZAP handler (block_event_publisher.h) admits only the
// client key derived here; a front's SUB socket is that client and pins the
// server key. Each secret key is SHA-256 of a fixed label and the token;
// the public keys follow from them (Curve25519). The token itself never
// leaves either machine.
#pragma once

#include <string>
#include <string_view>

namespace kvgate::wire {

// Z85 text, 40 characters each, as ZeroMQ's CURVE options take them.
struct EventCurveKeys {
  std::string server_public, server_secret;
  std::string client_public, client_secret;
};

// Throws kvgate::Error when this libzmq was built without CURVE.
EventCurveKeys event_curve_keys(std::string_view internal_token);

// The 32 bytes behind a Z85 key (what a ZAP request carries).
std::string z85_key_bytes(const std::string& z85);

}  // namespace kvgate::wire
