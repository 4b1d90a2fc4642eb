// Reply's order of steps, its 500 and abort on drop, and on_close's
// once-only rule, against a ReplyRecorder (no socket).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gateway/server/reply.h"
#include "gateway/server/reply_state.h"
#include "tests/gateway/server/reply_recorder.h"

namespace kvgate::server {
namespace {

using kvgate::server::testing::ReplyRecorder;
using Kind = ReplyEvent::Kind;

TEST(Reply, SendOnceThenRefused) {
  auto rec = std::make_shared<ReplyRecorder>();
  {
    Reply r(rec, 7);
    EXPECT_FALSE(r.responded());
    EXPECT_TRUE(r.send(200, {{"Content-Type", "text/plain"}}, "hi"));
    EXPECT_TRUE(r.responded());
    EXPECT_FALSE(r.send(200, {}, "again"));
    EXPECT_FALSE(r.start_stream(200, {}));
    EXPECT_FALSE(r.write("x"));
    EXPECT_FALSE(r.finish());
  }
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 1u);  // no 500 on drop: it answered
  EXPECT_EQ(ev[0].kind, Kind::kSend);
  EXPECT_EQ(ev[0].status, 200);
  EXPECT_EQ(ev[0].body, "hi");
  EXPECT_EQ(rec->exchanges()[0], 7u);
}

TEST(Reply, StreamSteps) {
  auto rec = std::make_shared<ReplyRecorder>();
  {
    Reply r(rec, 1);
    EXPECT_FALSE(r.write("early"));
    EXPECT_FALSE(r.finish());
    EXPECT_TRUE(r.start_stream(200, {}));
    EXPECT_TRUE(r.write("a"));
    EXPECT_TRUE(r.write(""));  // accepted, sends nothing: an empty chunk would end the body
    EXPECT_TRUE(r.write("b"));
    EXPECT_TRUE(r.finish());
    EXPECT_FALSE(r.write("late"));
    EXPECT_FALSE(r.finish());
  }
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kind, Kind::kStart);
  EXPECT_EQ(ev[1].body, "a");
  EXPECT_EQ(ev[2].body, "b");
  EXPECT_EQ(ev[3].kind, Kind::kFinish);
}

TEST(Reply, DroppedWithoutResponseIs500) {
  auto rec = std::make_shared<ReplyRecorder>();
  {
    Reply r(rec, 1);
    Reply copy = r;  // copies share the response: only the last one's drop counts
    r = Reply();
    EXPECT_TRUE(rec->events().empty());
  }
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Kind::kSend);
  EXPECT_EQ(ev[0].status, 500);
  EXPECT_NE(ev[0].body.find("\"type\":\"server_error\""), std::string::npos);
}

TEST(Reply, DroppedMidStreamAborts) {
  auto rec = std::make_shared<ReplyRecorder>();
  {
    Reply r(rec, 1);
    r.start_stream(200, {});
    r.write("partial");
  }
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[2].kind, Kind::kAbort);
}

TEST(Reply, MalformedResponseBecomes500) {
  auto rec = std::make_shared<ReplyRecorder>();
  Reply r(rec, 1);
  EXPECT_FALSE(r.send(200, {{"X-Evil", "a\r\nSet-Cookie: x"}}, "body"));
  EXPECT_FALSE(r.send(200, {}, "second"));
  Reply s(rec, 2);
  EXPECT_FALSE(s.start_stream(99, {}));
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].status, 500);
  EXPECT_EQ(ev[0].body.find("Set-Cookie"), std::string::npos);
  EXPECT_EQ(ev[1].status, 500);
}

TEST(Reply, OnCloseRunsOnceWhenClientLeaves) {
  auto rec = std::make_shared<ReplyRecorder>();
  Reply r(rec, 1);
  int runs = 0;
  r.on_close([&] { ++runs; });
  r.start_stream(200, {});
  r.state()->connection_closed();
  r.state()->connection_closed();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(r.client_gone());
  EXPECT_TRUE(r.write("dropped quietly"));  // accepted; the session ignores it
  // Registered after the client left: runs at once, on this thread.
  int late = 0;
  r.on_close([&] { ++late; });
  EXPECT_EQ(late, 1);
}

TEST(Reply, OnCloseNeverRunsAfterTheResponseIsWritten) {
  auto rec = std::make_shared<ReplyRecorder>();
  Reply r(rec, 1);
  int runs = 0;
  r.on_close([&] { ++runs; });
  r.send(200, {}, "done");
  r.state()->response_written();
  r.state()->connection_closed();
  r.on_close([&] { ++runs; });
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(r.client_gone());
}

TEST(Reply, ThrowingOnCloseIsContained) {
  auto rec = std::make_shared<ReplyRecorder>();
  Reply r(rec, 1);
  r.on_close([] { throw std::runtime_error("boom"); });
  r.send(200, {}, "x");
  EXPECT_NO_THROW(r.state()->connection_closed());
}

TEST(Reply, ConcurrentWritersKeepEachWriteWhole) {
  auto rec = std::make_shared<ReplyRecorder>();
  {
    Reply r(rec, 1);
    r.start_stream(200, {});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([r, t]() mutable {
        for (int i = 0; i < 250; ++i) r.write(std::to_string(t));
      });
    for (auto& th : threads) th.join();
    r.finish();
  }
  const auto ev = rec->events();
  ASSERT_EQ(ev.size(), 1002u);
  EXPECT_EQ(ev.front().kind, Kind::kStart);
  EXPECT_EQ(ev.back().kind, Kind::kFinish);
  int counts[4] = {};
  for (size_t i = 1; i + 1 < ev.size(); ++i) counts[ev[i].body[0] - '0']++;
  for (int c : counts) EXPECT_EQ(c, 250);
}

TEST(Reply, GoneTargetDropsEverything) {
  Reply r;
  {
    auto rec = std::make_shared<ReplyRecorder>();
    r = Reply(rec, 1);
  }
  EXPECT_TRUE(r.send(200, {}, "nobody listens"));  // accepted, and dropped
  Reply empty;
  EXPECT_FALSE(empty.send(200, {}, "x"));
}

}  // namespace
}  // namespace kvgate::server
