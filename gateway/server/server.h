// Server: the HTTPS (and, when asked, plain HTTP) front of `kvgate serve`.
// It listens, speaks HTTP/1.1 with keep-alive over TLS 1.2/1.3, enforces
// the limits and timeouts of ServerOptions, and hands every well-formed
// request to the Handler with a Reply to answer through.
//
//   Server server(options, handler);  // loads or makes the certificate, binds
//   server.start();                   // io_threads threads run the io_context
//   ...                               // https_port(), stats()
//   server.stop(deadline);            // stop accepting, let responses finish, close
//
// Threads: one io_context run by options.io_threads threads; every
// connection on its own strand. start(), stop(), stats() and the port
// accessors are for the owning thread (not an I/O thread); stop() blocks
// until every connection is closed and the I/O threads have ended.
//
// Lifetime: destroy the Server only after nothing calls Replies any more
// (stop the engine first): a Reply call racing the destructor is the one
// thing the server cannot make safe. Reply calls after stop() are harmless.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gateway/server/handler.h"
#include "gateway/server/self_signed_cert.h"
#include "gateway/server/server_options.h"
#include "gateway/server/server_stats.h"

namespace kvgate::server {

class Server {
 public:
  // Throws kvgate::Error for bad options, TLS material that cannot be
  // loaded or made, and ports that cannot be bound.
  Server(ServerOptions options, Handler handler);
  ~Server();  // stop(now) if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void start();

  // stop accepting; close idle connections; let responses in flight
  // finish (each then closes) until `deadline`; then close the rest (their
  // Replies' on_close run); end the I/O threads. Idempotent.
  void stop(std::chrono::steady_clock::time_point deadline);
  void stop(std::chrono::milliseconds grace) { stop(std::chrono::steady_clock::now() + grace); }

  // The bound ports (useful with port 0); nothing for a listener that is off.
  std::optional<uint16_t> https_port() const;
  std::optional<uint16_t> http_port() const;
  // The certificate served over TLS (nothing when HTTPS is off).
  const std::optional<CertificateInfo>& certificate() const;
  // "https://127.0.0.1:8443 (TLS certificate SHA-256 AB:CD:..., self-signed,
  // made in data/tls)" and the plain listener, for the start-up line.
  std::string describe() const;

  size_t open_connections() const;
  ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvgate::server
