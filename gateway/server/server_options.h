// ServerOptions: everything the HTTP(S) server can be told, with its
// defaults (docs/gateway.md, "Server", lists them). A plain value; the
// server copies it at construction and never changes it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kvgate::server {

struct TlsOptions {
  // PEM files: the certificate chain (leaf first) and its private key.
  // Both or neither; with neither, a self-signed certificate is made (once)
  // in self_signed_dir and reused on later starts.
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::filesystem::path self_signed_dir;
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  // The HTTPS listener; 0 asks the kernel for a free port (see
  // Server::https_port()). `https = false` turns it off.
  bool https = true;
  uint16_t https_port = 8443;
  // A plain-HTTP listener, only when set: never on by default.
  std::optional<uint16_t> http_port;
  TlsOptions tls;

  // Threads running the one io_context. Every connection is on its own
  // strand, so any number is safe.
  int io_threads = 1;

  // Request limits: a header block (request line included) past
  // max_header_bytes is a 431, a body past max_body_bytes a 413 (from
  // Content-Length before any body is read, or while reading a chunked one).
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 4 * 1024 * 1024;

  // Connections being served at once. One more is accepted and answered
  // 503 (after its request's header is read) while up to
  // kRejectingConnections are being turned away; beyond that it is closed
  // at once.
  size_t max_connections = 4096;
  // Connections served at once from one address (IP): past it, one is
  // answered 503 like a connection over max_connections, so no one client
  // takes every slot. 0: no such limit.
  size_t max_connections_per_address = 1024;

  // Whether a request's Authorization header (or, without one, its
  // x-api-key header as "Bearer <key>") holds a credential the
  // handler will accept: the handler's own check, cheap and non-blocking
  // (called on an I/O thread before the body is read). Null: every request
  // counts as authenticated. Until one of a connection's requests passes
  // it, a body may be at most max_unauthenticated_body_bytes (413 past it)
  // and the connection waits at most unauthenticated_idle_timeout for a
  // request, so connections without credentials cannot hold the server's
  // slots or memory for long.
  std::function<bool(std::string_view authorization)> authenticates;
  size_t max_unauthenticated_body_bytes = 64 * 1024;
  std::chrono::milliseconds unauthenticated_idle_timeout{5'000};

  // From a connection's first byte (TLS handshake included) and from a
  // request's first byte to its last: past it, 408 and close (slow loris).
  std::chrono::milliseconds read_timeout{30'000};
  // A kept-alive connection waiting for its next request is closed after it.
  std::chrono::milliseconds idle_timeout{60'000};
  // One write that makes no progress for this long drops the client (it
  // stopped reading); the Reply's on_close runs.
  std::chrono::milliseconds write_timeout{30'000};
  // How long a closing connection may take to let its last response reach
  // the client (reading and discarding what the client still sends, then
  // the TLS close_notify exchange).
  std::chrono::milliseconds close_linger{2'000};
};

// Connections over max_connections answered 503 at once, at most.
inline constexpr size_t kRejectingConnections = 64;

}  // namespace kvgate::server
