// The live server on 127.0.0.1 (port 0), driven by Beast/Asio clients that
// verify its certificate and by raw sockets: keep-alive, streaming from
// another thread, the limits (413, 431, 408, 503), bad input (garbage for a
// handshake, plain HTTP to the TLS port, malformed HTTP), client
// disconnects (on_close once), write timeouts and graceful stop. TLS
// settings and curl are in server_tls_test.cpp. Every test ends with no
// connection open (the fixture, server_fixture.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <thread>

#include "base/error.h"
#include "base/mutex.h"
#include "gateway/server/server.h"
#include "gateway/server/sse.h"
#include "tests/gateway/server/server_fixture.h"

namespace kvgate::server {
namespace {

using namespace std::chrono_literals;
using namespace kvgate::server::testing;

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

// One address may hold only its share of the slots; another is still served.
TEST_F(ServerTest, OneAddressPastItsShareIsAnswered503AndOthersAreServed) {
  ServerOptions o = options();
  o.max_connections_per_address = 2;
  start(o);
  std::vector<std::unique_ptr<TestClient>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<TestClient>(tls()));
    held.back()->from_address("127.0.0.2");
    ASSERT_FALSE(held.back()->open(port()));
    ASSERT_TRUE(held.back()->request("GET", "/held"));
  }
  TestClient over(tls());
  over.from_address("127.0.0.2");
  ASSERT_FALSE(over.open(port()));
  auto r = over.request("GET", "/over");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result_int(), 503);
  EXPECT_TRUE(over.closed_by_server());
  EXPECT_EQ(server_->stats().rejected_per_address, 1u);

  TestClient other(tls());  // 127.0.0.1
  ASSERT_FALSE(other.open(port()));
  auto ok = other.request("GET", "/other");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->result_int(), 200);

  held.front()->close();  // a slot of 127.0.0.2's comes back
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 2; }));
  TestClient again(tls());
  again.from_address("127.0.0.2");
  ASSERT_FALSE(again.open(port()));
  auto back = again.request("GET", "/again");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->result_int(), 200);
}

// Until a connection shows a credential the handler takes, it may send only
// a small body and wait only briefly for its next request.
TEST_F(ServerTest, WithoutCredentialsBodiesAreSmallAndIdleIsShort) {
  ServerOptions o = options();
  o.authenticates = [](std::string_view authorization) { return authorization == "Bearer good"; };
  o.max_unauthenticated_body_bytes = 100;
  o.unauthenticated_idle_timeout = 200ms;
  o.idle_timeout = 60s;
  start(o);
  const std::string body(1000, 'x');
  TestClient stranger(tls());
  ASSERT_FALSE(stranger.open(port()));
  auto refused = stranger.request("POST", "/v1/completions", body);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->result_int(), 413);
  EXPECT_TRUE(stranger.closed_by_server());

  TestClient idle(tls());
  ASSERT_FALSE(idle.open(port()));
  auto small = idle.request("POST", "/health", "{}");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->result_int(), 200);
  EXPECT_TRUE(idle.closed_by_server());  // after the short idle, well inside the client's own timeout

  TestClient known(tls());
  ASSERT_FALSE(known.open(port()));
  auto whole = known.request("POST", "/v1/completions", body, {{"Authorization", "Bearer good"}});
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->result_int(), 200);
  EXPECT_EQ(whole->body(), "POST /v1/completions 1000 tls");  // the whole body arrived
  std::this_thread::sleep_for(400ms);
  auto later = known.request("GET", "/later");  // still open past the short idle
  ASSERT_TRUE(later);
  EXPECT_EQ(later->result_int(), 200);
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

}  // namespace
}  // namespace kvgate::server
