// The client's pool and exchanges against gateway/server/'s Server on
// 127.0.0.1 (real TLS with the self-signed certificate, keep-alive, chunked
// streams), the pool's io_context on a thread of its own and the test's
// thread starting and cancelling exchanges, as the route front does from
// its server's I/O threads. Checked: a streamed body arrives in pieces and
// ends clean; the extra request headers go out and the status, Content-Type
// and Retry-After come back; sequential calls share one connection; cancel
// from another thread mid-stream ends the exchange "cancelled" once and the
// server sees the client go; cancel after the end changes nothing; a kept
// connection the server closed is retried once, unseen; exchanges started
// from many threads at once all end; a refused connect names the step.
// Nothing is timed: waits are bounded only so a failure cannot hang.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "base/error.h"
#include "gateway/client/connection_pool.h"
#include "gateway/client/http_exchange.h"
#include "gateway/client/https_target.h"
#include "tests/gateway/server/server_fixture.h"

namespace kvgate::client {
namespace {

using namespace std::chrono_literals;
using server::HttpRequest;
using server::Reply;
using server::testing::eventually;
using server::testing::kWait;
using server::testing::ready;
using server::testing::ReplySlot;

// What one exchange's handlers saw, from the io thread.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  int status = 0;
  HttpResponseHead head;
  std::vector<std::string> pieces;
  std::string body;
  std::vector<std::string> ends;

  template <class Pred>
  bool wait(Pred pred) {
    std::unique_lock l(mu);
    return cv.wait_for(l, kWait, pred);
  }
  bool wait_end() {
    return wait([&] { return !ends.empty(); });
  }
  bool wait_body(const std::string& text) {
    return wait([&] { return body.find(text) != std::string::npos; });
  }
  std::vector<std::string> ends_now() {
    std::lock_guard l(mu);
    return ends;
  }
};

ExchangeHandlers record(const std::shared_ptr<Recorder>& r) {
  ExchangeHandlers h;
  h.on_header = [r](int status, const HttpResponseHead& head) {
    std::lock_guard l(r->mu);
    r->status = status;
    r->head = head;
  };
  h.on_body = [r](std::string_view bytes) {
    std::lock_guard l(r->mu);
    r->pieces.emplace_back(bytes);
    r->body.append(bytes);
    r->cv.notify_all();
  };
  h.on_end = [r](const std::string& error) {
    std::lock_guard l(r->mu);
    r->ends.push_back(error);
    r->cv.notify_all();
  };
  return h;
}

server::HttpHeaders sse_headers() { return {{"Content-Type", "text/event-stream"}}; }

class HttpClient : public server::testing::ServerTest {
 protected:
  void TearDown() override {
    stop_client();  // its idle connections close, so the server's count drops to 0
    ServerTest::TearDown();
  }

  void start_client(const std::string& url, const TlsTrust& trust) {
    pool_ = std::make_unique<ConnectionPool>(io_, make_client_tls(trust), parse_https_url(url), true);
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void start_client() {
    std::string url = "https://127.0.0.1:";
    url.append(std::to_string(port()));
    start_client(url, {server_->certificate()->cert_file.string(), false});
  }
  void stop_client() {
    work_.reset();  // run() returns once no exchange is left
    if (io_thread_.joinable()) io_thread_.join();
    pool_.reset();
  }

  // Runs `fn` on the pool's io thread and waits for it.
  template <class F>
  auto on_io(F fn) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    result.wait();
    return result.get();
  }

  std::shared_ptr<Recorder> begin_call(const HttpCall& call, std::shared_ptr<HttpExchange>* exchange = nullptr) {
    auto r = std::make_shared<Recorder>();
    auto x = HttpExchange::start(*pool_, call, record(r));
    if (exchange) *exchange = x;
    return r;
  }
  std::shared_ptr<Recorder> fetch(const HttpCall& call) {
    auto r = begin_call(call);
    EXPECT_TRUE(r->wait_end());
    return r;
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
  std::thread io_thread_;
  std::unique_ptr<ConnectionPool> pool_;
};

TEST_F(HttpClient, AStreamedBodyArrivesInPiecesThenEndsClean) {
  ReplySlot slot;
  handler_ = [&](HttpRequest, Reply reply) {
    reply.start_stream(200, sse_headers());
    reply.write("data: one\n\n");
    slot.put(reply);
  };
  start();
  start_client();
  HttpCall call;
  call.method = "POST";
  call.path = "/v1/completions";
  call.body = "{}";
  auto r = begin_call(call);
  ASSERT_TRUE(r->wait_body("data: one\n\n"));  // before the server sends the rest
  Reply reply = slot.take();
  reply.write("data: two\n\n");
  ASSERT_TRUE(r->wait_body("data: two\n\n"));
  reply.finish();
  reply = Reply();
  ASSERT_TRUE(r->wait_end());
  std::lock_guard l(r->mu);
  EXPECT_EQ(r->ends, std::vector<std::string>{""});
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->head.content_type, "text/event-stream");
  EXPECT_EQ(r->body, "data: one\n\ndata: two\n\n");
  EXPECT_GE(r->pieces.size(), 2u);
}

TEST_F(HttpClient, ExtraHeadersGoOutAndTheStatusAndHeadComeBack) {
  std::mutex mu;
  std::string accept, agent, auth, type;
  handler_ = [&](HttpRequest req, Reply reply) {
    {
      std::lock_guard l(mu);
      accept = std::string(req.header("accept").value_or(""));
      agent = std::string(req.header("user-agent").value_or(""));
      auth = std::string(req.header("authorization").value_or(""));
      type = std::string(req.header("content-type").value_or(""));
    }
    reply.send(503, {{"Content-Type", "application/json"}, {"Retry-After", "2"}}, "{\"error\":{}}");
  };
  start();
  start_client();
  HttpCall call;
  call.method = "POST";
  call.path = "/v1/completions";
  call.bearer = "sk-1";
  call.body = "{}";
  call.headers = {{"Accept", "text/event-stream"}, {"User-Agent", "kvgate-route"}};
  auto r = fetch(call);
  {
    std::lock_guard l(r->mu);
    EXPECT_EQ(r->ends, std::vector<std::string>{""});
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->head.content_type, "application/json");
    EXPECT_EQ(r->head.retry_after, "2");
    EXPECT_EQ(r->body, "{\"error\":{}}");
  }
  std::lock_guard l(mu);
  EXPECT_EQ(accept, "text/event-stream");
  EXPECT_EQ(agent, "kvgate-route");  // replaces the default
  EXPECT_EQ(auth, "Bearer sk-1");
  EXPECT_EQ(type, "application/json");

  HttpCall bad;
  bad.headers = {{"X-Evil", "a\r\nInjected: yes"}};
  EXPECT_THROW(HttpExchange::start(*pool_, bad, {}), Error);
  bad.headers = {{"Bad Name", "x"}};
  EXPECT_THROW(HttpExchange::start(*pool_, bad, {}), Error);
}

TEST_F(HttpClient, SequentialCallsReuseOneKeptAliveConnection) {
  start();
  start_client();
  HttpCall call;
  call.path = "/hello";
  for (int i = 0; i < 3; ++i) {
    auto r = fetch(call);
    std::lock_guard l(r->mu);
    EXPECT_EQ(r->ends, std::vector<std::string>{""});
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "GET /hello 0 tls");
  }
  EXPECT_EQ(pool_->opened(), 1);
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), 1u);
  EXPECT_EQ(server_->stats().requests, 3u);
}

TEST_F(HttpClient, CancelMidStreamFromAnotherThreadEndsCancelledAndTheServerSeesTheClientGo) {
  ReplySlot slot;
  std::promise<void> closed;
  std::atomic<int> closes{0};
  handler_ = [&](HttpRequest req, Reply reply) {
    if (req.target == "/next") return server::testing::echo(std::move(req), reply);
    reply.on_close([&] {
      if (closes.fetch_add(1) == 0) closed.set_value();
    });
    reply.start_stream(200, sse_headers());
    reply.write("data: first\n\n");
    slot.put(reply);
  };
  start();
  start_client();
  HttpCall call;
  call.method = "POST";
  call.path = "/v1/completions";
  call.body = "{}";
  std::shared_ptr<HttpExchange> x;
  auto r = begin_call(call, &x);
  ASSERT_TRUE(r->wait_body("data: first"));
  Reply reply = slot.take();
  x->cancel();  // the test's thread, not the io thread
  ASSERT_TRUE(r->wait_end());
  EXPECT_EQ(r->ends_now(), std::vector<std::string>{"cancelled"});
  auto f = closed.get_future();
  ASSERT_TRUE(ready(f));
  EXPECT_TRUE(reply.client_gone());
  reply.write("data: to nobody\n\n");  // harmless, and reaches no handler
  reply.finish();
  reply = Reply();
  x->cancel();  // again: nothing
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), 0u);  // never returned to the pool
  EXPECT_EQ(r->ends_now(), std::vector<std::string>{"cancelled"});
  EXPECT_EQ(closes.load(), 1);
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));

  // The next call opens a fresh connection.
  HttpCall next_call;
  next_call.path = "/next";
  auto next = fetch(next_call);
  EXPECT_EQ(next->ends_now(), std::vector<std::string>{""});
  EXPECT_EQ(pool_->opened(), 2);
}

TEST_F(HttpClient, CancelAfterTheEndChangesNothing) {
  start();
  start_client();
  std::shared_ptr<HttpExchange> x;
  auto r = begin_call(HttpCall{}, &x);
  ASSERT_TRUE(r->wait_end());
  x->cancel();
  x->cancel();
  on_io([] { return 0; });  // the cancels have run on the io thread
  on_io([] { return 0; });
  EXPECT_EQ(r->ends_now(), std::vector<std::string>{""});
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), 1u);  // the connection stayed in the pool
  auto again = fetch(HttpCall{});
  EXPECT_EQ(again->ends_now(), std::vector<std::string>{""});
  EXPECT_EQ(pool_->opened(), 1);
}

TEST_F(HttpClient, CancelRightAfterStartEndsCancelledOnce) {
  start();
  start_client();
  for (int i = 0; i < 5; ++i) {
    std::shared_ptr<HttpExchange> x;
    auto r = begin_call(HttpCall{}, &x);
    x->cancel();  // wherever it got to: not begun, connecting, handshaking, reading
    ASSERT_TRUE(r->wait_end());
    on_io([] { return 0; });
    const auto ends = r->ends_now();
    ASSERT_EQ(ends.size(), 1u);
    // The response may have won the race on a reused connection.
    EXPECT_TRUE(ends[0] == "cancelled" || ends[0].empty()) << ends[0];
  }
  EXPECT_LE(on_io([&] { return pool_->idle(); }), 1u);
}

TEST_F(HttpClient, AKeptConnectionTheServerClosedIsRetriedOnceUnseen) {
  server::ServerOptions o = options();
  o.idle_timeout = 100ms;
  o.close_linger = 20ms;  // the idle client never answers the close: do not wait for it
  start(o);
  start_client();
  auto first = fetch(HttpCall{});
  EXPECT_EQ(first->ends_now(), std::vector<std::string>{""});
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 0; }));  // the server closed it
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), 1u);                         // the client does not know yet
  auto second = fetch(HttpCall{});
  std::lock_guard l(second->mu);
  EXPECT_EQ(second->ends, std::vector<std::string>{""});
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(second->body, "GET / 0 tls");
  EXPECT_EQ(pool_->opened(), 2);
  EXPECT_EQ(server_->stats().requests, 2u);
}

TEST_F(HttpClient, ExchangesStartedFromManyThreadsAllEnd) {
  start();
  start_client();
  constexpr int kThreads = 4, kEach = 8;
  std::vector<std::shared_ptr<Recorder>> recorders(kThreads * kEach);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        HttpCall call;
        call.path = "/t";
        call.path.append(std::to_string(t));
        auto r = begin_call(call);
        recorders[t * kEach + i] = r;
        if (i % 2) r->wait_end();  // half in flight together, half one after another
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads * kEach; ++i) {
    ASSERT_TRUE(recorders[i]->wait_end()) << i;
    std::lock_guard l(recorders[i]->mu);
    EXPECT_EQ(recorders[i]->ends, std::vector<std::string>{""}) << i;
    std::string expected = "GET /t";
    expected.append(std::to_string(i / kEach)).append(" 0 tls");
    EXPECT_EQ(recorders[i]->body, expected);
  }
  const int64_t opened = pool_->opened();
  EXPECT_GE(opened, 1);
  EXPECT_LE(opened, kThreads * kEach);
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), static_cast<size_t>(opened));
}

TEST_F(HttpClient, ARefusedConnectEndsWithAnErrorNamingConnect) {
  // A port nobody listens on: bound, read, released.
  uint16_t port = 0;
  {
    boost::asio::io_context tmp;
    boost::asio::ip::tcp::acceptor a(tmp, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  std::string url = "https://127.0.0.1:";
  url.append(std::to_string(port));
  start_client(url, {"", true});
  auto r = fetch(HttpCall{});
  const auto ends = r->ends_now();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].rfind("connect: ", 0), 0u) << ends[0];
  EXPECT_EQ(on_io([&] { return pool_->idle(); }), 0u);
}

}  // namespace
}  // namespace kvgate::client
