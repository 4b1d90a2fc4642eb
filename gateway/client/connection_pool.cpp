// Opening, lending and taking back TLS connections, on the pool's io thread.
#include "gateway/client/connection_pool.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>

#include "base/error.h"

namespace kvgate::client {
namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

ConnectionPool::ConnectionPool(net::io_context& io, std::shared_ptr<net::ssl::context> tls, HttpsTarget target,
                               bool verify_host)
    : io_(io), tls_(std::move(tls)), target_(std::move(target)), verify_host_(verify_host) {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  endpoints_ = resolver.resolve(target_.host, target_.port, ec);
  if (ec || endpoints_.empty())
    throw Error("cannot resolve " + target_.host + ":" + target_.port + ": " + (ec ? ec.message() : "no address"));
}

std::unique_ptr<Connection> ConnectionPool::take_idle() {
  if (idle_.empty()) return nullptr;
  std::unique_ptr<Connection> c = std::move(idle_.back());
  idle_.pop_back();
  return c;
}

void ConnectionPool::put_back(std::unique_ptr<Connection> c) { idle_.push_back(std::move(c)); }

Connection* ConnectionPool::open(std::chrono::steady_clock::duration timeout, Opened done) {
  auto c = std::make_unique<Connection>(io_, *tls_);
  opened_.fetch_add(1, std::memory_order_relaxed);
  SSL* ssl = c->stream.native_handle();
  boost::system::error_code not_ip;
  net::ip::make_address(target_.host, not_ip);
  // SNI is for names only (RFC 6066); an address is checked as an address.
  if (not_ip) SSL_set_tlsext_host_name(ssl, target_.host.c_str());
  if (verify_host_) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (not_ip)
      X509_VERIFY_PARAM_set1_host(param, target_.host.c_str(), 0);
    else
      X509_VERIFY_PARAM_set1_ip_asc(param, target_.host.c_str());
  }
  Connection* raw = c.get();
  beast::get_lowest_layer(raw->stream).expires_after(timeout);
  beast::get_lowest_layer(raw->stream)
      .async_connect(endpoints_, [raw, timeout, c = std::move(c), done = std::move(done)](
                                     boost::system::error_code e, const tcp::endpoint&) mutable {
        if (e) return done(e, "connect", nullptr);
        // Requests are small and latency is what is measured: no Nagle delay.
        beast::get_lowest_layer(raw->stream).socket().set_option(tcp::no_delay(true), e);
        beast::get_lowest_layer(raw->stream).expires_after(timeout);
        raw->stream.async_handshake(net::ssl::stream_base::client,
                                    [c = std::move(c), done = std::move(done)](boost::system::error_code h) mutable {
                                      if (h) return done(h, "TLS handshake", nullptr);
                                      done({}, "", std::move(c));
                                    });
      });
  return raw;
}

}  // namespace kvgate::client
