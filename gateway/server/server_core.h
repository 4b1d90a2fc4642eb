// ServerCore: what every session shares with its server: the options, the
// handler, the TLS context, the registry of open connections (and through
// it the connection limit and graceful stop), the counters, and the gate
// that makes posting to a session safe from any thread for as long as the
// io_context lives.
//
// Invariants: a registered session is open (its socket not yet closed);
// serving_ + rejecting_ == sessions_.size(); serving_ <= max_connections
// and rejecting_ <= kRejectingConnections; serving_by_address_ counts the
// serving entries by address, each at most max_connections_per_address; nothing is posted once the gate
// is closed. Sessions hold the core (shared_ptr); the core holds open
// sessions; a session leaves the registry when it closes, which breaks the
// cycle.
//
// Thread ownership: every method is safe from any thread. mu_ guards the
// registry, gate_mu_ the gate; neither is held while a session runs code.
#pragma once

#include <absl/base/thread_annotations.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "gateway/server/handler.h"
#include "gateway/server/server_options.h"
#include "gateway/server/server_stats.h"

namespace kvgate::server {

class SessionBase;

// What a connection is accepted for.
enum class SessionMode {
  kServe,          // requests go to the handler
  kBusy,           // over max_connections: one 503, then close
  kHttpsRequired,  // plain HTTP on the TLS port: one 400, then close
};

struct ServerCounters {
  std::atomic<uint64_t> accepted{0}, rejected_busy{0}, dropped_at_accept{0}, plain_http_on_tls{0}, not_tls{0},
      tls_handshake_failures{0}, read_timeouts{0}, write_timeouts{0}, requests{0}, rejected_per_address{0};
};

class ServerCore {
 public:
  ServerCore(ServerOptions options, Handler handler, std::unique_ptr<boost::asio::ssl::context> tls)
      : options_(std::move(options)), handler_(std::move(handler)), tls_(std::move(tls)) {}

  const ServerOptions& options() const { return options_; }
  const Handler& handler() const { return handler_; }
  boost::asio::ssl::context* tls() const { return tls_.get(); }
  ServerCounters& counters() { return counters_; }

  // Registers a new connection: make(mode, id) builds its session, under
  // the registry lock so two acceptors cannot both take the last slot.
  // Returns nothing (and the caller closes the socket) when even the
  // rejecting slots are full.
  // `address`: the client's IP, for max_connections_per_address.
  template <class Make>
  std::shared_ptr<SessionBase> admit(const std::string& address, Make&& make) {
    MutexLock lock(mu_);
    SessionMode mode;
    const size_t per_address = options_.max_connections_per_address;
    const auto held = serving_by_address_.find(address);
    const bool address_full = per_address > 0 && held != serving_by_address_.end() && held->second >= per_address;
    if (serving_ < options_.max_connections && !address_full) mode = SessionMode::kServe;
    else if (rejecting_ < kRejectingConnections) mode = SessionMode::kBusy;
    else return nullptr;
    if (address_full) counters_.rejected_per_address++;
    const uint64_t id = next_id_++;
    std::shared_ptr<SessionBase> session = make(mode, id);
    const bool serving = mode == SessionMode::kServe;
    sessions_.emplace(id, Entry{session, serving, serving ? address : std::string()});
    (serving ? serving_ : rejecting_)++;
    if (serving) ++serving_by_address_[address];
    return session;
  }
  // The connection `id` goes on in another session (TLS detection hands
  // over to the TLS or plain session); it keeps its slot.
  void replace(uint64_t id, std::shared_ptr<SessionBase> session);
  // The connection `id` is closed.
  void release(uint64_t id);

  size_t open_connections() const;
  std::vector<std::shared_ptr<SessionBase>> sessions() const;
  ServerStats stats() const;

  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  void begin_stop() { stopping_.store(true, std::memory_order_release); }
  // Ready once no connection is open.
  std::future<void> when_drained();

  // Posts f to `executor` unless the gate is closed (the io_context is
  // going away); returns whether it was posted.
  template <class Executor, class F>
  bool post(const Executor& executor, F&& f) {
    MutexLock lock(gate_mu_);
    if (!gate_open_) return false;
    boost::asio::post(executor, std::forward<F>(f));
    return true;
  }
  void close_gate() {
    MutexLock lock(gate_mu_);
    gate_open_ = false;
  }

 private:
  struct Entry {
    std::shared_ptr<SessionBase> session;
    bool serving;
    std::string address;  // a serving connection's, for its per-address count
  };

  const ServerOptions options_;
  const Handler handler_;
  const std::unique_ptr<boost::asio::ssl::context> tls_;
  ServerCounters counters_;
  std::atomic<bool> stopping_{false};

  mutable Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::unordered_map<uint64_t, Entry> sessions_ ABSL_GUARDED_BY(mu_);
  size_t serving_ ABSL_GUARDED_BY(mu_) = 0;
  size_t rejecting_ ABSL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, size_t> serving_by_address_ ABSL_GUARDED_BY(mu_);  // no zero counts kept
  std::vector<std::promise<void>> drain_waiters_ ABSL_GUARDED_BY(mu_);

  Mutex gate_mu_;
  bool gate_open_ ABSL_GUARDED_BY(gate_mu_) = true;
};

}  // namespace kvgate::server
