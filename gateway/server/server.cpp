// Server: TLS material, listeners, the I/O threads and graceful stop.
#include "gateway/server/server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <stdexcept>
#include <thread>
#include <vector>

#include "base/error.h"
#include "gateway/server/listener.h"
#include "gateway/server/server_core.h"
#include "gateway/server/session_base.h"
#include "gateway/server/tls_context.h"

namespace kvgate::server {

namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

namespace {

// After the deadline every connection is told to close at once; this
// bounds the wait for the strands to run those closes.
constexpr std::chrono::seconds kCloseGrace{5};

void check(const ServerOptions& o) {
  if (!o.https && !o.http_port) throw Error("server: neither HTTPS nor plain HTTP is enabled");
  if (o.io_threads < 1) throw Error("server: io_threads must be at least 1");
  if (o.max_connections < 1) throw Error("server: max_connections must be at least 1");
  if (o.max_header_bytes < 256) throw Error("server: max_header_bytes must be at least 256");
  if (o.tls.cert_file.empty() != o.tls.key_file.empty())
    throw Error("server: a TLS certificate needs both cert_file and key_file");
  if (o.read_timeout.count() <= 0 || o.idle_timeout.count() <= 0 || o.write_timeout.count() <= 0 ||
      o.close_linger.count() < 0)
    throw Error("server: timeouts must be positive");
}

}  // namespace

struct Server::Impl {
  net::io_context ioc;
  std::shared_ptr<ServerCore> core;
  std::shared_ptr<Listener> https, http;
  std::optional<CertificateInfo> certificate;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  bool started = false;
  bool stopped = false;

  explicit Impl(int threads_hint) : ioc(threads_hint) {}
};

Server::Server(ServerOptions options, Handler handler) {
  check(options);
  impl_ = std::make_unique<Impl>(options.io_threads);

  std::unique_ptr<net::ssl::context> tls;
  if (options.https) {
    if (!options.tls.cert_file.empty()) {
      impl_->certificate = CertificateInfo{options.tls.cert_file, options.tls.key_file,
                                           certificate_fingerprint(options.tls.cert_file), false};
    } else {
      impl_->certificate = ensure_self_signed_certificate(options.tls.self_signed_dir);
    }
    tls = make_tls_context(impl_->certificate->cert_file, impl_->certificate->key_file);
  }

  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(options.address, ec);
  if (ec) throw Error("server: '" + options.address + "' is not an IP address");

  const bool https = options.https;
  const uint16_t https_port = options.https_port;
  const std::optional<uint16_t> http_port = options.http_port;
  impl_->core = std::make_shared<ServerCore>(std::move(options), std::move(handler), std::move(tls));
  if (https) impl_->https = std::make_shared<Listener>(impl_->ioc, impl_->core, tcp::endpoint(address, https_port), true);
  if (http_port)
    impl_->http = std::make_shared<Listener>(impl_->ioc, impl_->core, tcp::endpoint(address, *http_port), false);
}

Server::~Server() {
  if (impl_->started) stop(std::chrono::steady_clock::now());
  impl_->core->close_gate();  // nothing may post to the io_context it is about to destroy
}

void Server::start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->work.emplace(net::make_work_guard(impl_->ioc));
  if (impl_->https) impl_->https->start();
  if (impl_->http) impl_->http->start();
  const int n = impl_->core->options().io_threads;
  for (int i = 0; i < n; ++i) {
    impl_->threads.emplace_back([this] {
      // A handler that throws must not end the thread: the server keeps going.
      for (;;) {
        try {
          impl_->ioc.run();
          return;
        } catch (...) {
        }
      }
    });
  }
}

void Server::stop(std::chrono::steady_clock::time_point deadline) {
  if (impl_->stopped || !impl_->started) {
    impl_->stopped = true;
    return;
  }
  if (impl_->ioc.get_executor().running_in_this_thread())
    throw std::logic_error("Server::stop() called from an I/O thread: it would wait for itself");
  impl_->stopped = true;
  ServerCore& core = *impl_->core;
  core.begin_stop();
  if (impl_->https) impl_->https->stop();
  if (impl_->http) impl_->http->stop();
  for (const auto& s : core.sessions()) s->server_stopping();

  if (core.when_drained().wait_until(deadline) == std::future_status::timeout) {
    for (const auto& s : core.sessions()) s->server_closing();
    core.when_drained().wait_for(kCloseGrace);
  }
  impl_->work.reset();
  impl_->ioc.stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

std::optional<uint16_t> Server::https_port() const {
  if (!impl_->https) return std::nullopt;
  return impl_->https->port();
}

std::optional<uint16_t> Server::http_port() const {
  if (!impl_->http) return std::nullopt;
  return impl_->http->port();
}

const std::optional<CertificateInfo>& Server::certificate() const { return impl_->certificate; }

std::string Server::describe() const {
  const std::string& address = impl_->core->options().address;
  std::string out;
  if (impl_->https) {
    out += "https://" + address + ":" + std::to_string(impl_->https->port());
    const CertificateInfo& c = *impl_->certificate;
    out += " (TLS certificate SHA-256 " + c.sha256_fingerprint;
    if (impl_->core->options().tls.cert_file.empty())
      out += std::string(c.generated ? ", self-signed, made in " : ", self-signed, from ") +
             c.cert_file.parent_path().string();
    else
      out += ", from " + c.cert_file.string();
    out += ")";
  }
  if (impl_->http) {
    if (!out.empty()) out += ", ";
    out += "http://" + address + ":" + std::to_string(impl_->http->port()) + " (plain HTTP)";
  }
  return out;
}

size_t Server::open_connections() const { return impl_->core->open_connections(); }

ServerStats Server::stats() const { return impl_->core->stats(); }

}  // namespace kvgate::server
