// ServerStats: counts a server reports (for tests, logs and later the
// metrics page). A snapshot: plain values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvgate::server {

struct ServerStats {
  size_t open_connections = 0;        // sockets open now, every stage
  uint64_t accepted = 0;              // connections accepted in all
  uint64_t rejected_busy = 0;         // answered 503: over max_connections or an address's share
  uint64_t rejected_per_address = 0;  // of those, over max_connections_per_address
  uint64_t dropped_at_accept = 0;     // closed at once: over max_connections + kRejectingConnections
  uint64_t plain_http_on_tls = 0;     // answered 400: HTTP to the TLS port
  uint64_t not_tls = 0;               // closed: neither TLS nor HTTP on the TLS port
  uint64_t tls_handshake_failures = 0;
  uint64_t read_timeouts = 0;         // 408s and handshakes that took too long
  uint64_t write_timeouts = 0;        // clients dropped for not reading
  uint64_t requests = 0;              // requests handed to the handler
};

}  // namespace kvgate::server
