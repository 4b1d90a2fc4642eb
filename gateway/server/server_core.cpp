// The connection registry: slots, hand-over, release and the drain signal.
#include "gateway/server/server_core.h"

#include "gateway/server/session_base.h"

namespace kvgate::server {

void ServerCore::replace(uint64_t id, std::shared_ptr<SessionBase> session) {
  std::shared_ptr<SessionBase> old;  // dropped after the lock: it may be the last reference
  MutexLock lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  old = std::move(it->second.session);
  it->second.session = std::move(session);
}

void ServerCore::release(uint64_t id) {
  std::shared_ptr<SessionBase> old;
  MutexLock lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  old = std::move(it->second.session);
  (it->second.serving ? serving_ : rejecting_)--;
  if (it->second.serving) {
    auto a = serving_by_address_.find(it->second.address);
    if (--a->second == 0) serving_by_address_.erase(a);
  }
  sessions_.erase(it);
  if (sessions_.empty()) {
    for (std::promise<void>& p : drain_waiters_) p.set_value();
    drain_waiters_.clear();
  }
}

size_t ServerCore::open_connections() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

std::vector<std::shared_ptr<SessionBase>> ServerCore::sessions() const {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<SessionBase>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, entry] : sessions_) out.push_back(entry.session);
  return out;
}

std::future<void> ServerCore::when_drained() {
  MutexLock lock(mu_);
  std::promise<void> p;
  std::future<void> f = p.get_future();
  if (sessions_.empty()) p.set_value();
  else drain_waiters_.push_back(std::move(p));
  return f;
}

ServerStats ServerCore::stats() const {
  ServerStats s;
  s.open_connections = open_connections();
  s.accepted = counters_.accepted.load();
  s.rejected_busy = counters_.rejected_busy.load();
  s.rejected_per_address = counters_.rejected_per_address.load();
  s.dropped_at_accept = counters_.dropped_at_accept.load();
  s.plain_http_on_tls = counters_.plain_http_on_tls.load();
  s.not_tls = counters_.not_tls.load();
  s.tls_handshake_failures = counters_.tls_handshake_failures.load();
  s.read_timeouts = counters_.read_timeouts.load();
  s.write_timeouts = counters_.write_timeouts.load();
  s.requests = counters_.requests.load();
  return s;
}

}  // namespace kvgate::server
