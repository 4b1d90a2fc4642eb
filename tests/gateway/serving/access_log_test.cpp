// The access log: one logfmt line per request, fields in their documented
// order, lines from many threads whole; and through the pipeline, exactly
// one line for a served request (its usage, to the token, and never the
// prompt or the output) and one for a refused one.
#include "gateway/serving/access_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "tests/gateway/serving/pipeline_fixture.h"
#include "tests/gateway/serving/recording_sink.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

using kvgate::testing::TempDir;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// Every field, in order, each value as docs/operations.md describes it.
const std::regex kLine(
    "time=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z request_id=[A-Za-z0-9_.-]+ tenant=[A-Za-z0-9_.-]+ "
    "key=[A-Za-z0-9_.-]+ status=\\d{3} finish=(stop|length|cancelled|error|-) prompt_tokens=\\d+ cached_tokens=\\d+ "
    "completion_tokens=\\d+ cost_micros=\\d+ latency_ms=\\d+\\.\\d{3} ttft_ms=(\\d+\\.\\d{3}|-)");

TEST(AccessLog, ALineHasEveryFieldInItsOrder) {
  AccessEntry e;
  e.time_ns = int64_t{1'738'324'800} * 1'000'000'000 + 123'456'789;  // 2025-01-31T12:00:00.123456789Z
  e.request_id = "req_abc", e.tenant = "acme", e.key_id = "key_1";
  e.status = 200;
  e.finish = "length";
  e.prompt_tokens = 11, e.cached_tokens = 8, e.completion_tokens = 32, e.cost_micros = 21;
  e.latency_ms = 184.2021;
  e.ttft_ms = 12.0509;
  EXPECT_EQ(AccessLog::format(e),
            "time=2025-01-31T12:00:00.123Z request_id=req_abc tenant=acme key=key_1 status=200 finish=length "
            "prompt_tokens=11 cached_tokens=8 completion_tokens=32 cost_micros=21 latency_ms=184.202 ttft_ms=12.051\n");
  AccessEntry refused;
  refused.time_ns = e.time_ns;
  refused.status = 429;
  refused.finish = "-";
  refused.ttft_ms = -1;
  const std::string line = AccessLog::format(refused);
  EXPECT_NE(line.find(" request_id=- tenant=- key=- status=429 finish=- "), std::string::npos) << line;
  EXPECT_NE(line.find(" ttft_ms=-\n"), std::string::npos) << line;
  EXPECT_TRUE(std::regex_match(line.substr(0, line.size() - 1), kLine)) << line;
}

TEST(AccessLog, LinesFromManyThreadsAreWholeAndAppendedToWhatWasThere) {
  TempDir dir;
  const std::string path = dir.sub("access.log");
  std::ofstream(path) << "an earlier line\n";
  {
    const std::unique_ptr<AccessLog> log = AccessLog::open(path);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&log, t] {
        const std::string id = "req_" + std::to_string(t);
        for (int i = 0; i < 200; ++i) {
          AccessEntry e;
          e.time_ns = 1;
          e.request_id = id, e.tenant = "t", e.key_id = "k";
          e.finish = "stop";
          e.prompt_tokens = static_cast<uint64_t>(i);
          log->write(e);
        }
      });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(log->write_errors(), 0u);
  }
  const std::vector<std::string> lines = lines_of(path);
  ASSERT_EQ(lines.size(), 1u + 8 * 200);
  EXPECT_EQ(lines[0], "an earlier line");
  for (size_t i = 1; i < lines.size(); ++i) ASSERT_TRUE(std::regex_match(lines[i], kLine)) << lines[i];
}

TEST(AccessLog, AFileThatCannotBeOpenedIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.sub("no/such/dir/access.log");
  try {
    AccessLog::open(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  const std::unique_ptr<AccessLog> fresh = AccessLog::open(dir.sub("new.log"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.sub("new.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0137, 0u) << "neither group-writable nor world-readable";
}

class AccessLogPipeline : public testing::PipelineFixture {
 protected:
  std::string path_ = dir_.sub("access.log");
  std::unique_ptr<AccessLog> log_ = AccessLog::open(path_);
  Pipeline logged_{*engine_, *tenancy_, *tokenizer_, billing_, metrics_, log_.get()};

  ServeRequest request(const tenancy::Principal& who, const std::string& id, int32_t max_tokens) {
    ServeRequest r;
    r.who = who;
    r.request_id = id;
    r.model = testing::kModelId;
    r.prompt = tokenizer_->encode(testing::kStoryPrompt, {.add_bos = true, .parse_special = false});
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    return r;
  }
};

TEST_F(AccessLogPipeline, AServedRequestIsOneLineOfWhatItWasBilledAndNeverItsText) {
  const tenancy::Principal who = tenant("acme", {.requests_per_minute = 1});
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(std::holds_alternative<RequestId>(logged_.start(request(who, "req_served", 4), sink)));
  const Served s = sink->wait();  // the line is written before the client is told
  ASSERT_TRUE(s.recorded);
  std::vector<std::string> lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 1u);
  const std::string& l = lines[0];
  EXPECT_TRUE(std::regex_match(l, kLine)) << l;
  std::ostringstream want;
  want << " request_id=req_served tenant=acme key=" << who.key_id << " status=200 finish=length prompt_tokens="
       << s.usage.prompt_tokens << " cached_tokens=" << s.usage.cached() << " completion_tokens=4 cost_micros="
       << s.cost_micros << " latency_ms=";
  EXPECT_NE(l.find(want.str()), std::string::npos) << l << "\nwanted: " << want.str();
  EXPECT_EQ(l.find("ttft_ms=-"), std::string::npos) << "it had a first token: " << l;
  // Neither the prompt nor the output, not even a word of either.
  for (const std::string& word : {std::string("Lily"), std::string("sunshine")})
    EXPECT_EQ(l.find(word), std::string::npos) << l;
  const std::string out = sink->text();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(l.find(out), std::string::npos) << l;

  // Over its one request a minute: refused, and one line says so.
  auto refused = std::make_shared<RecordingSink>();
  ASSERT_TRUE(std::holds_alternative<NotStarted>(logged_.start(request(who, "req_refused", 4), refused)));
  lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(std::regex_match(lines[1], kLine)) << lines[1];
  EXPECT_NE(lines[1].find(" request_id=req_refused tenant=acme "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" status=429 finish=- "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" completion_tokens=0 cost_micros=0 "), std::string::npos) << lines[1];

  // The pipeline without a log writes none.
  auto quiet = std::make_shared<RecordingSink>();
  ASSERT_TRUE(std::holds_alternative<RequestId>(
      pipeline_->start(request(tenant("other"), "req_unlogged", 2), quiet)));
  quiet->wait();
  EXPECT_EQ(lines_of(path_).size(), 2u);
}

}  // namespace
}  // namespace kvgate::serving
