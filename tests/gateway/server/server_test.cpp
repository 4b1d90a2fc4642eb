// The live server on 127.0.0.1 (port 0), driven by Beast/Asio clients that
// verify its certificate, by raw sockets and by curl: keep-alive,
// streaming from another thread, the limits (413, 431, 408, 503), bad
// input (garbage for a handshake, plain HTTP to the TLS port, malformed
// HTTP), client disconnects (on_close once), write timeouts, graceful stop
// and TLS settings. Every test ends with no connection open (TearDown
// waits for it, bounded, before stopping the server). Nothing is timed:
// waits are bounded only so a failure cannot hang.
#include <gtest/gtest.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <thread>

#include "engine/error.h"
#include "engine/mutex.h"
#include "gateway/server/server.h"
#include "gateway/server/sse.h"
#include "tests/temp_dir.h"
#include "tests/gateway/server/test_client.h"

namespace kvgate::server {
namespace {

using namespace std::chrono_literals;
using kvgate::testing::TempDir;
using testing::TestClient;

constexpr auto kWait = 20s;  // a failure guard, never an expectation

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

void echo(HttpRequest req, Reply reply) {
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

// ---- keep-alive, streaming, the handler seam -----------------------------

TEST_F(ServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  auto r1 = c.request("GET", "/v1/models");
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->result_int(), 200);
  EXPECT_EQ(r1->body(), "GET /v1/models 0 tls");
  EXPECT_TRUE(r1->keep_alive());
  auto r2 = c.request("POST", "/v1/completions", "hello");
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->body(), "POST /v1/completions 5 tls");
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 2u);
  EXPECT_EQ(server_->open_connections(), 1u);
}

TEST_F(ServerTest, HandlerSeesMethodTargetHeadersBodyAndPeer) {
  std::promise<HttpRequest> seen;
  handler_ = [&](HttpRequest req, Reply reply) {
    reply.send(204, {}, "");
    seen.set_value(std::move(req));
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  auto r = c.request("POST", "/v1/chat/completions?x=1", "{\"a\":1}",
                     {{"Authorization", "Bearer k"}, {"X-Custom", "v"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 204);
  auto f = seen.get_future();
  ASSERT_TRUE(ready(f));
  const HttpRequest req = f.get();
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/v1/chat/completions?x=1");
  EXPECT_EQ(req.path(), "/v1/chat/completions");
  EXPECT_EQ(req.version, 11);
  EXPECT_EQ(req.header("authorization").value_or(""), "Bearer k");
  EXPECT_EQ(req.header("x-CUSTOM").value_or(""), "v");
  EXPECT_FALSE(req.header("missing"));
  EXPECT_EQ(req.body, "{\"a\":1}");
  EXPECT_TRUE(req.secure);
  EXPECT_EQ(req.peer.rfind("127.0.0.1:", 0), 0u) << req.peer;
}

TEST_F(ServerTest, StreamWrittenFromAnotherThreadArrivesPieceByPiece) {
  ReplySlot slot;
  handler_ = [&](HttpRequest req, Reply reply) {
    if (req.target == "/after") return echo(std::move(req), reply);
    reply.start_stream(200, sse_headers());
    slot.put(reply);
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.send("POST", "/v1/chat/completions", "{}"));
  Reply reply = slot.take();
  ASSERT_TRUE(reply.responded());

  // The writer is another thread, as the engine loop is; each piece is
  // read by the client before the next is written, so the test shows
  // that pieces go out as they are written, not at the end.
  std::promise<void> go[4];
  std::thread writer([&, reply]() mutable {
    for (int i = 0; i < 3; ++i) {
      go[i].get_future().wait();
      reply.write(sse_data("{\"piece\":" + std::to_string(i) + "}"));
    }
    go[3].get_future().wait();
    reply.write(std::string(kSseDone));
    reply.finish();
  });
  ASSERT_FALSE(c.read_header());
  EXPECT_EQ(c.stream_parser().get()[testing::http::field::content_type], "text/event-stream");
  EXPECT_TRUE(c.stream_parser().chunked());
  for (int i = 0; i < 3; ++i) {
    go[i].set_value();
    ASSERT_FALSE(c.read_body_until("{\"piece\":" + std::to_string(i) + "}"));
  }
  go[3].set_value();
  ASSERT_FALSE(c.read_body_until("[DONE]"));
  writer.join();
  reply = Reply();
  ASSERT_FALSE(c.read_body_until("never there"));  // reads to the end of the message
  EXPECT_TRUE(c.stream_parser().is_done());
  EXPECT_EQ(c.stream_parser().get().body(),
            "data: {\"piece\":0}\n\ndata: {\"piece\":1}\n\ndata: {\"piece\":2}\n\ndata: [DONE]\n\n");
  // The connection is kept alive after a finished stream.
  auto again = c.request("GET", "/after");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->result_int(), 200);
}

TEST_F(ServerTest, DroppedReplyIs500AndTheConnectionLivesOn) {
  handler_ = [](HttpRequest req, Reply reply) {
    if (req.target == "/throw") throw std::runtime_error("handler bug");
    if (req.target == "/ok") reply.send(200, {}, "ok");
    // otherwise: drop the Reply unanswered
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  auto dropped = c.request("GET", "/drop");
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->result_int(), 500);
  EXPECT_EQ((*dropped)[testing::http::field::content_type], "application/json");
  EXPECT_NE(dropped->body().find("\"type\":\"server_error\""), std::string::npos);
  auto thrown = c.request("GET", "/throw");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->result_int(), 500);
  auto ok = c.request("GET", "/ok");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200);
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto a = c.read();
  auto b = c.read();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->body(), "GET /a 0 tls");
  EXPECT_EQ(b->body(), "GET /b 0 tls");
}

TEST_F(ServerTest, ExpectContinueGetsA100ThenTheAnswer) {
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(
      c.write_raw("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  auto cont = c.read();
  ASSERT_TRUE(cont);
  EXPECT_EQ(cont->result_int(), 100);
  ASSERT_FALSE(c.write_raw("hello"));
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body(), "POST /up 5 tls");
}

TEST_F(ServerTest, HeadSendsTheLengthWithoutTheBody) {
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string raw = c.read_until_closed();
  EXPECT_EQ(raw.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << raw;
  EXPECT_NE(raw.find("Content-Length: 13\r\n"), std::string::npos) << raw;  // "HEAD /h 0 tls"
  EXPECT_NE(raw.find("Connection: close\r\n"), std::string::npos) << raw;
  EXPECT_EQ(raw.substr(raw.size() - 4), "\r\n\r\n") << raw;
}

TEST_F(ServerTest, Http10StreamIsUnchunkedAndEndsWithTheClose) {
  handler_ = [](HttpRequest, Reply reply) {
    reply.start_stream(200, sse_headers());
    reply.write(sse_data("one"));
    reply.write(sse_data("two"));
    reply.finish();
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("GET /s HTTP/1.0\r\n\r\n"));
  const std::string raw = c.read_until_closed();
  EXPECT_EQ(raw.find("Transfer-Encoding"), std::string::npos) << raw;
  EXPECT_NE(raw.find("Connection: close\r\n"), std::string::npos) << raw;
  EXPECT_NE(raw.find("\r\n\r\ndata: one\n\ndata: two\n\n"), std::string::npos) << raw;
}

// ---- limits ---------------------------------------------------------------

TEST_F(ServerTest, BodyOverTheLimitByContentLengthIs413BeforeAnyBody) {
  ServerOptions o = options();
  o.max_body_bytes = 1024;
  start(o);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n"));
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 413);
  EXPECT_FALSE(r->keep_alive());
  EXPECT_EQ((*r)[testing::http::field::content_type], "application/json");
  EXPECT_NE(r->body().find("\"code\":\"body_too_large\""), std::string::npos) << r->body();
  EXPECT_NE(r->body().find("\"type\":\"invalid_request_error\""), std::string::npos);
  EXPECT_NE(r->body().find("\"param\":null"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(ServerTest, ChunkedBodyOverTheLimitIs413WhileReading) {
  ServerOptions o = options();
  o.max_body_bytes = 1024;
  start(o);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  const std::string piece(800, 'x');
  ASSERT_FALSE(c.write_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "320\r\n" + piece + "\r\n320\r\n" + piece + "\r\n0\r\n\r\n"));
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 413);
}

TEST_F(ServerTest, HugeBodySentInFullStillGetsIts413) {
  // The client writes all of it before reading: the server must drain what
  // it refused, or the client's kernel resets the connection and the 413
  // is lost.
  ServerOptions o = options();
  o.max_body_bytes = 1024;
  start(o);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 8388608\r\n\r\n" +
                           std::string(8 << 20, 'x')));
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 413);
}

TEST_F(ServerTest, LargeBodyWithinTheLimitArrivesWhole) {
  handler_ = [](HttpRequest req, Reply reply) {
    reply.send(200, {}, std::to_string(req.body.size()) + " " + std::to_string(std::hash<std::string>{}(req.body)));
  };
  start();  // the default limit, 4 MiB
  std::string body(3 << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>((i * 2654435761u) >> 13);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  auto r = c.request("POST", "/v1/completions", body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body(), std::to_string(body.size()) + " " + std::to_string(std::hash<std::string>{}(body)));
  auto again = c.request("POST", "/v1/completions", "small");  // and the connection lives on
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body().substr(0, 2), "5 ");
}

TEST_F(ServerTest, HeaderOverTheLimitIs431) {
  start();  // the default limit, 16 KiB
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n"));
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 431);
  EXPECT_NE(r->body().find("\"code\":\"header_too_large\""), std::string::npos) << r->body();
  EXPECT_TRUE(c.closed_by_server());

  TestClient fine(tls());  // a header under the limit is served
  ASSERT_FALSE(fine.open(port()));
  auto ok = fine.request("GET", "/", "", {{"X-Big", std::string(8 << 10, 'a')}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200);
}

TEST_F(ServerTest, SlowLorisGets408AndIsClosed) {
  ServerOptions o = options();
  o.read_timeout = 300ms;
  start(o);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.write_raw("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  // A byte at a time, each well inside any per-read timeout, until the
  // server answers: the read timeout covers the whole header, not each read.
  for (int i = 0; i < 2000 && c.tcp_stream().socket().available() == 0; ++i) {
    if (c.write_raw("a")) break;
    std::this_thread::sleep_for(5ms);  // pacing, not an assertion
  }
  auto r = c.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 408);
  EXPECT_NE(r->body().find("\"code\":\"request_timeout\""), std::string::npos) << r->body();
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(server_->stats().read_timeouts, 1u);
}

TEST_F(ServerTest, IdleKeptAliveConnectionIsClosed) {
  ServerOptions o = options();
  o.idle_timeout = 200ms;
  start(o);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_TRUE(c.request("GET", "/"));
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(ServerTest, MaxConnectionsAnswers503ThenAdmitsAgain) {
  ServerOptions o = options();
  o.max_connections = 2;
  start(o);
  TestClient a(tls()), b(tls());
  ASSERT_FALSE(a.open(port()));
  ASSERT_FALSE(b.open(port()));
  ASSERT_TRUE(a.request("GET", "/a"));
  ASSERT_TRUE(b.request("GET", "/b"));

  TestClient over(tls());
  ASSERT_FALSE(over.open(port()));
  auto r = over.request("GET", "/c");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 503);
  EXPECT_EQ((*r)[testing::http::field::retry_after], "1");
  EXPECT_NE(r->body().find("\"code\":\"server_busy\""), std::string::npos);
  EXPECT_NE(r->body().find("\"type\":\"server_error\""), std::string::npos);
  EXPECT_TRUE(over.closed_by_server());
  EXPECT_EQ(server_->stats().rejected_busy, 1u);

  a.close();
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 1; }));
  TestClient again(tls());
  ASSERT_FALSE(again.open(port()));
  auto ok = again.request("GET", "/d");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200);
}

TEST_F(ServerTest, PastTheRejectingSlotsConnectionsAreClosedAtOnce) {
  ServerOptions o = options();
  o.https = false;
  o.http_port = 0;
  o.max_connections = 1;
  start(o);
  const uint16_t p = *server_->http_port();
  std::vector<std::unique_ptr<TestClient>> clients;
  for (size_t i = 0; i < 1 + kRejectingConnections; ++i) {
    clients.push_back(std::make_unique<TestClient>());
    ASSERT_FALSE(clients.back()->connect(p));
  }
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 1 + kRejectingConnections; }));
  TestClient dropped;
  ASSERT_FALSE(dropped.connect(p));
  EXPECT_TRUE(dropped.closed_by_server());
  EXPECT_EQ(server_->stats().dropped_at_accept, 1u);
  // A waiting rejected client still gets its 503.
  auto r = clients[1]->request("GET", "/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 503);
}

// ---- bad input at the door --------------------------------------------------

TEST_F(ServerTest, GarbageInsteadOfAHandshakeIsClosedAndOthersAreServed) {
  start();
  TestClient junk;  // raw TCP
  ASSERT_FALSE(junk.connect(port()));
  ASSERT_FALSE(junk.write_raw(std::string("\x01\x02\x03\xff garbage, not TLS\r\n", 22)));
  EXPECT_TRUE(junk.closed_by_server());

  TestClient fake;  // looks like a TLS record, is not one
  ASSERT_FALSE(fake.connect(port()));
  ASSERT_FALSE(fake.write_raw(std::string("\x16\x03\x01\x00\x10", 5) + std::string(64, '\x7f')));
  EXPECT_TRUE(fake.closed_by_server());

  TestClient good(tls());
  ASSERT_FALSE(good.open(port()));
  auto r = good.request("GET", "/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 200);
  EXPECT_EQ(server_->stats().not_tls, 1u);
  EXPECT_EQ(server_->stats().tls_handshake_failures, 1u);
}

TEST_F(ServerTest, PlainHttpToTheTlsPortGetsAPlainText400) {
  start();
  TestClient plain;
  ASSERT_FALSE(plain.connect(port()));
  auto r = plain.request("GET", "/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 400);
  EXPECT_NE(r->body().find("this port speaks HTTPS"), std::string::npos) << r->body();
  EXPECT_NE(r->body().find("\"code\":\"https_required\""), std::string::npos) << r->body();
  EXPECT_FALSE(r->keep_alive());
  EXPECT_TRUE(plain.closed_by_server());
  EXPECT_EQ(server_->stats().plain_http_on_tls, 1u);
  EXPECT_EQ(server_->stats().requests, 0u);  // the handler never saw it
}

TEST_F(ServerTest, MalformedHttpIs400) {
  start();
  for (const std::string bad : {"NOT HTTP AT ALL\r\n\r\n", "GET / HTTP/1.1\r\nBad Header Line\r\n\r\n",
                                "GET / HTTP/9.9\r\n\r\n",
                                "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n"}) {
    TestClient c(tls());
    ASSERT_FALSE(c.open(port()));
    ASSERT_FALSE(c.write_raw(bad));
    auto r = c.read();
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->result_int(), 400) << bad;
    EXPECT_NE(r->body().find("\"code\":\"bad_request\""), std::string::npos) << r->body();
    EXPECT_TRUE(c.closed_by_server());
  }
  EXPECT_EQ(server_->stats().requests, 0u);
}

// ---- clients that leave ---------------------------------------------------

TEST_F(ServerTest, ClientDisconnectingMidStreamFiresOnCloseOnce) {
  ReplySlot slot;
  std::atomic<int> closes{0};
  std::promise<void> closed;
  handler_ = [&](HttpRequest, Reply reply) {
    reply.on_close([&] {
      if (closes.fetch_add(1) == 0) closed.set_value();
    });
    reply.start_stream(200, sse_headers());
    reply.write(sse_data("first"));
    slot.put(reply);
  };
  start();
  {
    TestClient c(tls());
    ASSERT_FALSE(c.open(port()));
    ASSERT_FALSE(c.send("POST", "/v1/chat/completions", "{}"));
    ASSERT_FALSE(c.read_header());
    ASSERT_FALSE(c.read_body_until("first"));
  }  // the client goes away mid-stream
  Reply reply = slot.take();
  auto f = closed.get_future();
  ASSERT_TRUE(ready(f));  // seen at once, without a write to fail
  EXPECT_TRUE(reply.client_gone());
  EXPECT_TRUE(reply.write(sse_data("to nobody")));  // harmless
  EXPECT_TRUE(reply.finish());
  reply = Reply();
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  EXPECT_EQ(closes.load(), 1);
}

TEST_F(ServerTest, ClientThatStopsReadingIsDroppedByTheWriteTimeout) {
  ServerOptions o = options();
  o.write_timeout = 300ms;
  ReplySlot slot;
  std::atomic<bool> gone{false};
  std::promise<void> closed;
  handler_ = [&](HttpRequest, Reply reply) {
    reply.on_close([&] {
      gone = true;
      closed.set_value();
    });
    reply.start_stream(200, sse_headers());
    slot.put(reply);
  };
  start(o);
  TestClient c(tls());
  c.shrink_receive_buffer();
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.send("POST", "/v1/chat/completions", "{}"));
  ASSERT_FALSE(c.read_header());
  // ...and the client reads nothing more. 32 MiB cannot fit in the kernel
  // buffers between us, so one write stalls and the timeout drops it.
  Reply reply = slot.take();
  std::thread writer([&, reply]() mutable {
    const std::string piece(256 << 10, 'x');
    for (int i = 0; i < 128 && !gone; ++i) reply.write(piece);
  });
  auto f = closed.get_future();
  EXPECT_TRUE(ready(f));
  writer.join();
  reply = Reply();
  EXPECT_EQ(server_->stats().write_timeouts, 1u);
  c.close();
}

// ---- stop -----------------------------------------------------------------

TEST_F(ServerTest, StopLetsTheResponseInFlightFinishThenCloses) {
  ReplySlot slot;
  std::atomic<int> closes{0};
  handler_ = [&](HttpRequest req, Reply reply) {
    if (req.target == "/idle") return echo(std::move(req), reply);
    reply.on_close([&] { ++closes; });
    slot.put(reply);
  };
  start();
  TestClient idle(tls());
  ASSERT_FALSE(idle.open(port()));
  ASSERT_TRUE(idle.request("GET", "/idle"));
  TestClient busy(tls());
  ASSERT_FALSE(busy.open(port()));
  ASSERT_FALSE(busy.send("POST", "/v1/completions", "{}"));
  Reply reply = slot.take();
  ASSERT_TRUE(reply.state());

  const uint16_t p = port();
  std::thread stopper([&] { server_->stop(std::chrono::steady_clock::now() + kWait); });
  EXPECT_TRUE(idle.closed_by_server());  // idle connections go at once
  EXPECT_TRUE(eventually([&] {           // and nobody new gets in
    TestClient late;
    return static_cast<bool>(late.connect(p));
  }));
  reply.send(200, {}, "finished during stop");
  auto r = busy.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body(), "finished during stop");
  EXPECT_FALSE(r->keep_alive());
  EXPECT_TRUE(busy.closed_by_server());
  stopper.join();
  EXPECT_EQ(server_->open_connections(), 0u);
  EXPECT_EQ(closes.load(), 0);  // it finished: nothing was cut off
}

TEST_F(ServerTest, StopAtTheDeadlineCutsOffWhatIsLeftAndFiresOnClose) {
  ReplySlot slot;
  std::promise<void> closed;
  handler_ = [&](HttpRequest, Reply reply) {
    reply.on_close([&] { closed.set_value(); });
    reply.start_stream(200, sse_headers());
    reply.write(sse_data("partial"));
    slot.put(reply);
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_FALSE(c.send("POST", "/v1/completions", "{}"));
  Reply reply = slot.take();
  ASSERT_FALSE(c.read_header());
  server_->stop(std::chrono::steady_clock::now() + 100ms);  // the engine never finishes
  auto f = closed.get_future();
  EXPECT_TRUE(ready(f));
  EXPECT_EQ(server_->open_connections(), 0u);
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_TRUE(reply.write("after stop"));  // harmless
  reply = Reply();
}

TEST_F(ServerTest, StopFromAnIoThreadIsRefused) {
  std::promise<std::string> what;
  handler_ = [&](HttpRequest, Reply reply) {
    try {
      server_->stop(0ms);
      what.set_value("no error");
    } catch (const std::logic_error& e) {
      what.set_value(e.what());
    }
    reply.send(200, {}, "ok");
  };
  start();
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  ASSERT_TRUE(c.request("GET", "/"));
  auto f = what.get_future();
  ASSERT_TRUE(ready(f));
  EXPECT_NE(f.get().find("I/O thread"), std::string::npos);
}

// ---- TLS ------------------------------------------------------------------

std::string peer_fingerprint(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(cert, EVP_sha256(), md, &n);
  X509_free(cert);
  std::string out;
  char hex[4];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(hex, sizeof hex, i ? ":%02X" : "%02X", md[i]);
    out += hex;
  }
  return out;
}

TEST_F(ServerTest, SelfSignedCertificateIsMadeOnceAndReusedAcrossStarts) {
  start();
  const CertificateInfo first = *server_->certificate();
  EXPECT_TRUE(first.generated);
  EXPECT_NE(server_->describe().find(first.sha256_fingerprint), std::string::npos) << server_->describe();
  {
    TestClient c(tls());
    ASSERT_FALSE(c.open(port()));
    EXPECT_EQ(peer_fingerprint(c.ssl_handle()), first.sha256_fingerprint);
  }
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  server_->stop(5s);
  server_.reset();

  start();  // a second start in the same directory
  EXPECT_FALSE(server_->certificate()->generated);
  EXPECT_EQ(server_->certificate()->sha256_fingerprint, first.sha256_fingerprint);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  EXPECT_EQ(peer_fingerprint(c.ssl_handle()), first.sha256_fingerprint);
  ASSERT_TRUE(c.request("GET", "/"));
}

TEST_F(ServerTest, ConfiguredCertificateFilesAreUsed) {
  const CertificateInfo made = ensure_self_signed_certificate(dir_.path() / "operator");
  ServerOptions o = options();
  o.tls.cert_file = made.cert_file;
  o.tls.key_file = made.key_file;
  o.tls.self_signed_dir.clear();
  start(o);
  EXPECT_EQ(server_->certificate()->sha256_fingerprint, made.sha256_fingerprint);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "tls"));
  TestClient c({made.cert_file});
  ASSERT_FALSE(c.open(port()));
  ASSERT_TRUE(c.request("GET", "/"));
}

TEST_F(ServerTest, BadOptionsAndTlsFilesAreClearErrors) {
  ServerOptions o = options();
  o.tls.cert_file = dir_.path() / "missing.crt";
  o.tls.key_file = dir_.path() / "missing.key";
  EXPECT_THROW(Server(o, echo), Error);
  ServerOptions none = options();
  none.https = false;
  EXPECT_THROW(Server(none, echo), Error);
  ServerOptions half = options();
  half.tls.cert_file = "only-the-cert.pem";
  EXPECT_THROW(Server(half, echo), Error);
  ServerOptions bad_address = options();
  bad_address.address = "not-an-address";
  EXPECT_THROW(Server(bad_address, echo), Error);
}

TEST_F(ServerTest, BusyPortIsAnError) {
  start();
  ServerOptions o = options();
  o.https_port = port();
  try {
    Server second(o, echo);
    FAIL() << "binding a busy port must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(port())), std::string::npos) << e.what();
  }
}

TEST_F(ServerTest, Tls12WithEcdheAeadAndTls13AreServed) {
  start();
  TestClient v12({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"});
  ASSERT_FALSE(v12.open(port()));
  EXPECT_STREQ(SSL_get_version(v12.ssl_handle()), "TLSv1.2");
  EXPECT_STREQ(SSL_get_cipher_name(v12.ssl_handle()), "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_EQ(SSL_get_current_compression(v12.ssl_handle()), nullptr);
  ASSERT_TRUE(v12.request("GET", "/"));

  TestClient chacha(
      {server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"});
  ASSERT_FALSE(chacha.open(port()));

  TestClient v13({server_->certificate()->cert_file, TLS1_3_VERSION});
  ASSERT_FALSE(v13.open(port()));
  EXPECT_STREQ(SSL_get_version(v13.ssl_handle()), "TLSv1.3");
  ASSERT_TRUE(v13.request("GET", "/"));
}

TEST_F(ServerTest, OldProtocolsAndWeakCiphersAreRefused) {
  start();
  TestClient v11({server_->certificate()->cert_file, TLS1_1_VERSION, TLS1_1_VERSION});
  EXPECT_TRUE(v11.open(port()));
  TestClient cbc({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"});
  EXPECT_TRUE(cbc.open(port()));
  TestClient rsa_kx({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "AES128-GCM-SHA256"});
  EXPECT_TRUE(rsa_kx.open(port()));
  // The client sees the alert before the server's session has counted it.
  EXPECT_TRUE(eventually([&] { return server_->stats().tls_handshake_failures >= 3; }));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 3u);
}

TEST_F(ServerTest, AlpnSettlesOnHttp11) {
  start();
  TestClient c(tls());
  static const unsigned char kOffer[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_set_alpn_protos(c.ssl_handle(), kOffer, sizeof kOffer);
  ASSERT_FALSE(c.open(port()));
  const unsigned char* proto = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(c.ssl_handle(), &proto, &len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(proto), len), "http/1.1");
}

TEST_F(ServerTest, PlainHttpListenerOnlyWhenEnabled) {
  start();
  EXPECT_FALSE(server_->http_port());
  server_->stop(5s);
  server_.reset();

  ServerOptions o = options();
  o.http_port = 0;
  start(o);
  ASSERT_TRUE(server_->http_port());
  TestClient plain;
  ASSERT_FALSE(plain.connect(*server_->http_port()));
  auto r = plain.request("GET", "/x");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body(), "GET /x 0 plain");
  TestClient secure(tls());
  ASSERT_FALSE(secure.open(port()));
  auto s = secure.request("GET", "/y");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->body(), "GET /y 0 tls");
}

TEST_F(ServerTest, SeveralIoThreadsServeManyConnections) {
  ServerOptions o = options();
  o.io_threads = 3;
  start(o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      TestClient c(tls());
      if (c.open(port())) return;
      for (int i = 0; i < 10; ++i) {
        auto r = c.request("POST", "/n", std::string(static_cast<size_t>(i) * 100, 'z'));
        if (r && r->result_int() == 200 && r->body() == "POST /n " + std::to_string(i * 100) + " tls") ++ok;
        else std::fprintf(stderr, "request %d failed: %s\n", i, r ? r->body().c_str() : "no response");
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 60);
}

// ---- curl -----------------------------------------------------------------

#ifdef KVGATE_CURL
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST_F(ServerTest, CurlVerifiesTheCertificateAndReusesTheConnection) {
  handler_ = [](HttpRequest req, Reply reply) {
    if (req.path() == "/stream") {
      reply.start_stream(200, sse_headers());
      reply.write(sse_data("{\"n\":1}"));
      reply.write(sse_data("{\"n\":2}"));
      reply.write(std::string(kSseDone));
      reply.finish();
      return;
    }
    echo(std::move(req), reply);
  };
  start();
  const std::string p = std::to_string(port());
  const std::string base = std::string(KVGATE_CURL) + " -sS --max-time 20 --cacert " +
                           server_->certificate()->cert_file.string() + " --resolve localhost:" + p + ":127.0.0.1 ";
  const std::string url = "https://localhost:" + p;
  // Two URLs in one run: curl keeps the connection alive between them.
  EXPECT_EQ(run(base + "-d hello " + url + "/v1/a " + url + "/v1/b 2>&1"), "POST /v1/a 5 tlsPOST /v1/b 5 tls");
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(run(base + "-N " + url + "/stream 2>&1"), "data: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: [DONE]\n\n");
  // A body over the limit, sent as curl sends big bodies (Expect: 100-continue).
  const std::string big = (dir_.path() / "big.bin").string();
  run("head -c 5000000 /dev/zero > " + big);
  EXPECT_EQ(run(base + "-o /dev/null -w '%{http_code}' --data-binary @" + big + " " + url + "/v1/big 2>&1"), "413");
  // Without the certificate, curl refuses the server.
  EXPECT_NE(run(std::string(KVGATE_CURL) + " -sS --max-time 20 --resolve localhost:" + p + ":127.0.0.1 " + url +
                "/ 2>&1")
                .find("certificate"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace kvgate::server
