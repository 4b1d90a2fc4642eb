// The server's TLS configuration, in one place: TLS 1.2 and 1.3 only;
// for 1.2 ECDHE key exchange with AES-GCM or ChaCha20-Poly1305 (forward
// secrecy, AEAD only); for 1.3 OpenSSL's default suites; X25519, P-256
// and P-384 groups; no renegotiation, no compression; ALPN answers
// "http/1.1" (so a client offering h2 falls back). Built once at start-up;
// an asio ssl::context is then shared, read-only, by every TLS session.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <filesystem>
#include <memory>

namespace kvgate::server {

inline constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Throws kvgate::Error naming the file and OpenSSL's reason when the
// certificate chain or key cannot be loaded or do not match.
std::unique_ptr<boost::asio::ssl::context> make_tls_context(const std::filesystem::path& cert_chain_file,
                                                            const std::filesystem::path& key_file);

}  // namespace kvgate::server
