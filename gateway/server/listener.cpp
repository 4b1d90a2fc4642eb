// The accept loop and the connection limits at the door (in all, and per address).
#include "gateway/server/listener.h"

#include <boost/asio/strand.hpp>

#include "base/error.h"
#include "gateway/server/detect_session.h"
#include "gateway/server/plain_session.h"

namespace kvgate::server {

namespace {

struct Peer {
  std::string address;  // the IP, for the per-address limit
  std::string name;     // "ip:port", for logs
};

Peer peer_of(const tcp::socket& socket) {
  boost::system::error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return {"unknown", "unknown"};
  std::string address = ep.address().to_string();
  return {address, address + ":" + std::to_string(ep.port())};
}

}  // namespace

Listener::Listener(net::io_context& ioc, std::shared_ptr<ServerCore> core, const tcp::endpoint& at, bool tls)
    : ioc_(ioc), core_(std::move(core)), acceptor_(net::make_strand(ioc)), retry_(acceptor_.get_executor()), tls_(tls) {
  boost::system::error_code ec;
  const std::string where = at.address().to_string() + ":" + std::to_string(at.port());
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw Error("server: cannot listen on " + where + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
}

void Listener::start() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] { self->do_accept(); });
}

void Listener::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->retry_.cancel();
    self->acceptor_.close(ignored);
  });
}

void Listener::do_accept() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept(net::make_strand(ioc_), [self = shared_from_this()](boost::system::error_code ec,
                                                                             tcp::socket socket) {
    self->on_accept(ec, std::move(socket));
  });
}

void Listener::on_accept(boost::system::error_code ec, tcp::socket socket) {
  if (!acceptor_.is_open() || ec == net::error::operation_aborted) return;
  if (ec) {  // EMFILE and friends: the condition lasts, so wait rather than spin
    retry_.expires_after(std::chrono::milliseconds(100));
    retry_.async_wait([self = shared_from_this()](boost::system::error_code e) {
      if (!e) self->do_accept();
    });
    return;
  }
  boost::system::error_code ignored;
  if (core_->stopping()) {
    socket.close(ignored);
    return do_accept();
  }
  core_->counters().accepted++;
  socket.set_option(tcp::no_delay(true), ignored);  // SSE tokens and small replies go out at once
  const Peer peer = peer_of(socket);
  std::shared_ptr<SessionBase> session =
      core_->admit(peer.address, [&](SessionMode mode, uint64_t id) -> std::shared_ptr<SessionBase> {
        if (tls_) return std::make_shared<DetectSession>(core_, id, std::move(socket), mode, peer.name);
        return std::make_shared<PlainSession>(core_, id, std::move(socket), beast::flat_buffer(), mode, peer.name);
      });
  if (session) {
    session->start();
  } else {
    core_->counters().dropped_at_accept++;
    socket.close(ignored);
  }
  do_accept();
}

}  // namespace kvgate::server
