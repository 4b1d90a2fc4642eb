// A replica's internal routes (internal_api.h) over a real engine on
// stories260K, answered into a recording reply: only the front's token
// opens them, the streamed ids are the engine's own, the accounting holds
// (prompt = cached + fresh) and a repeat is served from the cache, a front
// that goes away frees its request. Also the token file's rules.
#include "gateway/cluster/replica/internal_api.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "base/error.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/tier_identity.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cluster/wire/event_wire.h"
#include "gateway/server/reply_state.h"
#include "gateway/cluster/replica/block_event_publisher.h"
#include "gateway/cluster/wire/replica_wire.h"
#include "tests/engine/test_models.h"
#include "tests/gateway/server/reply_recorder.h"
#include "tests/gateway/server/test_request.h"
#include "tests/temp_dir.h"

namespace kvgate::replica {
namespace {

namespace json = boost::json;
using server::ReplyEvent;
using Kind = ReplyEvent::Kind;
using server::testing::header;
using server::testing::ReplyRecorder;

const std::string kToken = "0123456789abcdef0123456789abcdef-front";

class InternalApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = kvgate::testing::stories();
    tokenizer_ = Tokenizer::from_gguf(model_->file());
    BackendOptions bo;
    bo.kv_budget_bytes = kv_budget_for_blocks(model_->config(), KvType::kF32, bo.block_size, 256);
    auto backend = make_cpu_backend(model_, bo);
    SchedulerOptions so;
    so.model = model_fingerprint(*model_, backend->kv_layout());
    so.eos = tokenizer_->eos();
    identity_ = tier_identity(*backend, so.model);
    engine_ = std::make_unique<Engine>(std::move(backend), std::move(so), EngineOptions{.max_outstanding = 2});
    api_ = std::make_unique<InternalApi>(*engine_, wire::InternalToken(kToken), "stories260K", identity_,
                                         "tcp://127.0.0.1:5557");
  }
  void TearDown() override { engine_->shutdown(); }

  Request request(const std::string& prompt, int32_t max_tokens, cache::ScopeId scope = {7, 9}) {
    Request r;
    r.prompt = tokenizer_->encode(prompt, {.add_bos = true, .parse_special = false});
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.scope = scope;
    return r;
  }

  server::HttpRequest http(std::string method, std::string_view path, std::string body = {},
                           std::optional<std::string> bearer = kToken) {
    return server::testing::test_request(std::move(method), path, std::move(body), std::move(bearer));
  }

  // Calls the route; the reply and its recorder stay with the caller.
  std::shared_ptr<ReplyRecorder> call(const server::HttpRequest& req, server::Reply* keep = nullptr) {
    auto rec = std::make_shared<ReplyRecorder>();
    server::Reply reply(rec, 1);
    (*api_)(req, reply);
    if (keep) *keep = reply;
    return rec;
  }

  struct Streamed {
    Tokens tokens;
    std::vector<Completion> done;
  };
  // A generate call run to its end and read as the front reads it.
  Streamed generate(const Request& r, const Submitter& who = {.tenant = 42}) {
    auto rec = call(http("POST", wire::kReplicaGeneratePath, wire::encode_replica_call(r, who)));
    const std::vector<ReplyEvent> ev = rec->wait();
    EXPECT_FALSE(ev.empty());
    if (ev.empty()) return {};
    EXPECT_EQ(ev.front().kind, Kind::kStart) << (ev.front().kind == Kind::kSend ? ev.front().body : "");
    EXPECT_EQ(ev.front().status, 200);
    EXPECT_EQ(header(ev.front(), "content-type"), wire::kReplicaStreamContentType);
    EXPECT_EQ(ev.back().kind, Kind::kFinish);
    Streamed s;
    wire::ReplicaStreamReader reader(
        SteadyClock::now(), [&s](TokenId t) { s.tokens.push_back(t); },
        [&s](Completion c) { s.done.push_back(std::move(c)); });
    for (const ReplyEvent& e : ev) {
      if (e.kind != Kind::kWrite) continue;
      EXPECT_TRUE(e.body.ends_with('\n')) << "one whole line per write";
      reader.feed(e.body, SteadyClock::now());
    }
    EXPECT_TRUE(reader.done());
    return s;
  }

  const std::string prompt_ =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine with "
      "her dog and her friends, and every day she went to the park.";
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  cache::KvIdentity identity_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<InternalApi> api_;
};

TEST_F(InternalApiTest, OnlyTheFrontsTokenOpensTheRoutes) {
  const std::string body = wire::encode_replica_call(request(prompt_, 4), {});
  for (const std::optional<std::string>& bearer :
       {std::optional<std::string>(), std::optional<std::string>("wrong"), std::optional<std::string>(kToken + "x"),
        std::optional<std::string>(kToken.substr(1))}) {
    for (const server::HttpRequest& req :
         {http("POST", wire::kReplicaGeneratePath, body, bearer), http("GET", wire::kReplicaInfoPath, {}, bearer)}) {
      const std::vector<ReplyEvent> ev = call(req)->wait();
      ASSERT_EQ(ev.size(), 1u);
      EXPECT_EQ(ev[0].status, 401) << req.target;
      EXPECT_EQ(json::parse(ev[0].body).at("error").at("type").as_string(), "authentication_error");
    }
  }
  EXPECT_EQ(engine_->outstanding(), 0);
  EXPECT_EQ(call(http("GET", "/internal/v1/nothing"))->wait().at(0).status, 404);
  EXPECT_EQ(call(http("GET", wire::kReplicaGeneratePath))->wait().at(0).status, 405);
}

TEST_F(InternalApiTest, StreamsTheEnginesGreedyTokensAndARepeatIsServedFromTheCache) {
  const Request r = request(prompt_, 12);
  const Tokens direct = engine_->submit(request(prompt_, 12, {1, 1}), {})->wait().result.output;
  ASSERT_FALSE(direct.empty());

  const Streamed first = generate(r);
  EXPECT_EQ(first.tokens, direct);
  ASSERT_EQ(first.done.size(), 1u);
  const RequestResult& a = first.done[0].result;
  EXPECT_EQ(a.output, direct);
  EXPECT_EQ(a.prompt_tokens, static_cast<int32_t>(r.prompt.size()));
  EXPECT_EQ(a.prompt_tokens, a.cached_tokens + a.fresh_prefill_tokens);
  EXPECT_EQ(a.cached_tokens, 0);  // its own scope: nothing of the direct run is shared
  EXPECT_GT(a.cache_written_tokens, 0);
  EXPECT_TRUE(first.done[0].error.empty());
  EXPECT_GE(first.done[0].timing.admitted_step, 0);

  const Streamed second = generate(r);
  EXPECT_EQ(second.tokens, direct);
  const RequestResult& b = second.done.at(0).result;
  EXPECT_GT(b.cached_tokens, 0);
  EXPECT_EQ(b.prompt_tokens, b.cached_tokens + b.fresh_prefill_tokens);
  EXPECT_EQ(engine_->outstanding(), 0);
}

TEST_F(InternalApiTest, InfoStatesTheEnginesIdentityBoundsAndLoad) {
  const std::vector<ReplyEvent> ev = call(http("GET", wire::kReplicaInfoPath))->wait();
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].status, 200) << ev[0].body;
  const wire::ReplicaInfo info = wire::parse_replica_info(ev[0].body);
  EXPECT_EQ(info.model, "stories260K");
  EXPECT_EQ(info.identity, identity_);
  EXPECT_TRUE(info.prefix_cache);
  EXPECT_EQ(info.bounds.context_length, engine_->bounds().context_length);
  EXPECT_EQ(info.bounds.pool_blocks, engine_->bounds().pool_blocks);
  EXPECT_EQ(info.block_events, "tcp://127.0.0.1:5557");
  EXPECT_EQ(info.outstanding, 0);
}

TEST_F(InternalApiTest, RefusalsBeforeTheStreamAreOrdinaryResponses) {
  {  // not the wire format: 400 naming the field
    const std::vector<ReplyEvent> ev = call(http("POST", wire::kReplicaGeneratePath, "{\"prompt\":[1]}"))->wait();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, 400);
    EXPECT_EQ(json::parse(ev[0].body).at("error").at("param").as_string(), "scope");
  }
  {  // the engine's own limits: 400
    const Request r = request(prompt_, 100000);
    const std::vector<ReplyEvent> ev = call(http("POST", wire::kReplicaGeneratePath, wire::encode_replica_call(r, {})))->wait();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, 400);
    EXPECT_NE(ev[0].body.find("max_tokens"), std::string::npos) << ev[0].body;
  }
  {  // a full engine: 503 with retry-after
    Request longer = request(prompt_, 400);
    longer.ignore_eos = true;
    const auto s1 = engine_->submit(longer, {});
    const auto s2 = engine_->submit(longer, {});
    const std::vector<ReplyEvent> ev =
        call(http("POST", wire::kReplicaGeneratePath, wire::encode_replica_call(request(prompt_, 4), {})))->wait();
    engine_->cancel(s1->id());
    engine_->cancel(s2->id());
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, 503);
    EXPECT_EQ(header(ev[0], "retry-after"), "1");
    s1->wait();
    s2->wait();
  }
}

TEST_F(InternalApiTest, AFrontThatGoesAwayCancelsItsRequestAndFreesItsBlocks) {
  // Gone before the request is even submitted: on_close runs as it is set,
  // so the cancel cannot race a fast engine to the request's end.
  Request r = request(prompt_, 400);
  r.ignore_eos = true;
  auto rec = std::make_shared<ReplyRecorder>();
  server::Reply reply(rec, 1);
  reply.state()->connection_closed();
  (*api_)(http("POST", wire::kReplicaGeneratePath, wire::encode_replica_call(r, {})), reply);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (engine_->outstanding() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(engine_->outstanding(), 0);
  EXPECT_EQ(engine_->available_blocks(), engine_->num_blocks());
  EXPECT_LT(engine_->steps(), 400) << "it ran to its end instead of being cancelled";
}

TEST_F(InternalApiTest, AFrontThatGoesAwayMidStreamCancelsItsRequest) {
  Request r = request(prompt_, 400);
  r.ignore_eos = true;
  server::Reply reply;
  auto rec = call(http("POST", wire::kReplicaGeneratePath, wire::encode_replica_call(r, {})), &reply);
  ASSERT_EQ(rec->wait(1).at(0).kind, Kind::kStart);
  reply.state()->connection_closed();  // maybe after its end on a fast machine: then nothing is left to cancel
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (engine_->outstanding() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(engine_->outstanding(), 0);
  EXPECT_EQ(engine_->available_blocks(), engine_->num_blocks());
}

TEST_F(InternalApiTest, BlocksAnswersThePublishersSnapshotToTheFrontOnly) {
  {  // no publisher: nothing to answer
    const std::vector<ReplyEvent> ev = call(http("GET", wire::kReplicaBlocksPath))->wait();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].status, 404);
    EXPECT_EQ(json::parse(ev[0].body).at("error").at("message").as_string(), "this replica publishes no block events");
  }
  BlockEventPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.keys = wire::event_curve_keys(std::string(40, 'k'));
  o.identity = identity_;
  BlockEventPublisher pub(o);
  const cache::BlockEvent disk{cache::BlockEventKind::kStored, -1, {1, 2}, {}, 42, 0, policies::Tier::kDisk};
  const cache::BlockEvent device{cache::BlockEventKind::kStored, 3, {5, 6}, {1, 2}, 42, 1, policies::Tier::kDevice};
  cache::BlockEvent gone = device;
  gone.hash = {7, 8};
  pub.on_block_event(disk);
  pub.on_block_event(device);
  pub.on_block_event(gone);
  gone.kind = cache::BlockEventKind::kRemoved;
  pub.on_block_event(gone);
  api_ = std::make_unique<InternalApi>(*engine_, wire::InternalToken(kToken), "stories260K", identity_, pub.endpoint(), &pub);

  EXPECT_EQ(call(http("GET", wire::kReplicaBlocksPath, {}, std::nullopt))->wait().at(0).status, 401);
  EXPECT_EQ(call(http("GET", wire::kReplicaBlocksPath, {}, "wrong"))->wait().at(0).status, 401);
  EXPECT_EQ(call(http("POST", wire::kReplicaBlocksPath))->wait().at(0).status, 405);
  const std::vector<ReplyEvent> ev = call(http("GET", wire::kReplicaBlocksPath))->wait();
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_EQ(ev[0].status, 200) << ev[0].body;
  EXPECT_EQ(header(ev[0], "content-type"), "application/octet-stream");
  const wire::EventMessage m =
      wire::decode({reinterpret_cast<const std::byte*>(ev[0].body.data()), ev[0].body.size()});
  EXPECT_EQ(m.type, wire::EventMessage::Type::kEvents);
  EXPECT_EQ(m.instance, pub.instance());
  EXPECT_EQ(m.identity, identity_);
  EXPECT_GE(m.seq, 1u) << "the events told were closed into a numbered batch";
  ASSERT_EQ(m.events.size(), 2u);
  const wire::WireEvent want_disk{disk.kind, disk.tier, disk.hash, disk.parent, disk.tenant, disk.depth};
  const wire::WireEvent want_device{device.kind, device.tier, device.hash, device.parent, device.tenant, device.depth};
  EXPECT_EQ(m.events[0], want_device) << "by tier: device first";
  EXPECT_EQ(m.events[1], want_disk);
  EXPECT_EQ(pub.stats().snapshots, 1);
}

// ---- the token file

std::string write_file(const kvgate::testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.sub(name);
  std::ofstream(path, std::ios::binary) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  return path;
}

TEST(InternalTokenFile, ATrailingNewlineIsTrimmedAndEveryBadFileNamedWithItsFault) {
  kvgate::testing::TempDir dir;
  EXPECT_EQ(wire::read_internal_token(write_file(dir, "lf", kToken + "\n")), kToken);
  EXPECT_EQ(wire::read_internal_token(write_file(dir, "crlf", kToken + "\r\n")), kToken);
  EXPECT_EQ(wire::read_internal_token(write_file(dir, "bare", kToken)), kToken);
  const auto refused = [](const std::string& path, std::string_view why) {
    try {
      wire::read_internal_token(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(dir.sub("absent"), "cannot be read");
  refused(write_file(dir, "short", "0123456789abcdef\n"), "has 16 characters");
  refused(write_file(dir, "empty", ""), "has 0 characters");
  refused(write_file(dir, "space", "0123456789abcdef 0123456789abcdef\n"), "at byte 16");
  refused(write_file(dir, "two", kToken + "\n\n"), "at byte");
  refused(write_file(dir, "tab", "\t" + kToken), "at byte 0");
  // A secret every user can read, or others can write, is refused before it is read.
  const std::string open = write_file(dir, "open", kToken);
  for (auto mode : {std::filesystem::perms::others_read, std::filesystem::perms::group_write}) {
    std::filesystem::permissions(open, mode, std::filesystem::perm_options::add);
    refused(open, "chmod 600");
    std::filesystem::permissions(open, mode, std::filesystem::perm_options::remove);
  }
  std::filesystem::permissions(open, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  EXPECT_EQ(wire::read_internal_token(open), kToken);  // a group that may read it, as ssl-cert reads keys
}

TEST(InternalTokenFile, TheTokenMatchesOnlyItself) {
  const wire::InternalToken t(kToken);
  EXPECT_TRUE(t.matches(kToken));
  EXPECT_FALSE(t.matches(kToken.substr(0, kToken.size() - 1)));
  EXPECT_FALSE(t.matches(""));
  EXPECT_FALSE(t.matches("Bearer " + kToken));
}

}  // namespace
}  // namespace kvgate::replica
