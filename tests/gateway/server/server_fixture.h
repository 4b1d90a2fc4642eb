// The live server on 127.0.0.1 (port 0) as the server suites drive it: a
// fixture that starts it with a self-signed certificate in a temporary
// folder and, at the end, waits (bounded) for every connection to close
// before stopping it; a Reply slot to answer from the test's thread; and
// the bounded waits. Nothing is timed: waits are bounded only so a failure
// cannot hang.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "gateway/server/server.h"
#include "tests/gateway/server/reply_recorder.h"  // kWait
#include "tests/gateway/server/test_client.h"
#include "tests/temp_dir.h"

namespace kvgate::server::testing {

using namespace std::chrono_literals;
using kvgate::testing::TempDir;

template <class Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

template <class T>
bool ready(std::future<T>& f) {
  return f.wait_for(kWait) == std::future_status::ready;
}

inline void echo(HttpRequest req, Reply reply) {
  reply.send(200, {{"Content-Type", "text/plain"}},
             req.method + " " + req.target + " " + std::to_string(req.body.size()) +
                 (req.secure ? " tls" : " plain"));
}

// A Reply handed from the I/O thread to the test's thread.
class ReplySlot {
 public:
  void put(Reply r) {
    {
      MutexLock lock(mu_);
      reply_ = std::move(r);
    }
    arrived_.set_value();
  }
  Reply take() {
    if (!ready(future_)) return Reply();
    MutexLock lock(mu_);
    Reply r = std::move(reply_);
    reply_ = Reply();
    return r;
  }

 private:
  Mutex mu_;
  Reply reply_ ABSL_GUARDED_BY(mu_);
  std::promise<void> arrived_;
  std::future<void> future_ = arrived_.get_future();
};

class ServerTest : public ::testing::Test {
 protected:
  ServerOptions options() const {
    ServerOptions o;
    o.https_port = 0;
    o.tls.self_signed_dir = dir_.path() / "tls";
    // Short enough for idle connections to go, long enough for a loaded
    // sanitizer build; tests of the timeouts shorten their own.
    o.read_timeout = 10s;
    o.idle_timeout = 10s;
    o.write_timeout = 10s;
    o.close_linger = 2s;
    return o;
  }

  void start(const ServerOptions& o) {
    server_ = std::make_unique<Server>(o, [this](HttpRequest req, Reply reply) { handler_(std::move(req), reply); });
    server_->start();
  }
  void start() { start(options()); }

  void TearDown() override {
    if (!server_) return;
    EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }))
        << server_->open_connections() << " connections still open";
    server_->stop(5s);
    EXPECT_EQ(server_->open_connections(), 0u);
  }

  uint16_t port() const { return *server_->https_port(); }
  TestClient::TlsSettings tls() const { return {server_->certificate()->cert_file}; }

  TempDir dir_;
  std::function<void(HttpRequest, Reply)> handler_ = echo;
  std::unique_ptr<Server> server_;
};

}  // namespace kvgate::server::testing
