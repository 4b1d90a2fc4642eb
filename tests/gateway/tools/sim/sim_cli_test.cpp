// `kvgate sim` as a user runs it: a trace file, tables on stdout, errors as
// `kvgate: error: ...` with exit code 1.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include <boost/json.hpp>

#include "tests/temp_dir.h"

namespace kvgate {
namespace {

struct CliRun {
  int exit_code;
  std::string out;  // stdout and stderr together
};

CliRun kvgate(const std::string& args) {
  const std::string cmd = std::string(KVGATE_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string write(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.sub(name);
  std::ofstream(path) << text;
  return path;
}

const char* kTrace =
    R"({"timestamp": 0, "input_length": 1024, "output_length": 5, "hash_ids": [0, 1]}
{"timestamp": 1, "input_length": 700, "output_length": 5, "hash_ids": [0, 2]}
{"timestamp": 2, "input_length": 1500, "output_length": 5, "hash_ids": [0, 1, 3]}
)";

TEST(SimCli, PrintsATablePerCapacityWithTheBeladyBound) {
  testing::TempDir dir;
  const CliRun r = kvgate("sim --trace " + write(dir, "t.jsonl", kTrace) + " --capacity 2,75% --policy lru,s3fifo:ghost=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("3 requests, 7 block references, 4 distinct blocks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### device 2 blocks (50.00% of the distinct blocks)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### device 3 blocks (75.00% of the distinct blocks)"), std::string::npos) << r.out;
  // Capacity 2, LRU: 1024 of 3224 tokens, 2 of 7 blocks (tests/gateway/sim/replay_test.cpp).
  EXPECT_NE(r.out.find("| lru | 31.76 | 28.57 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| s3fifo:ghost=4 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| belady (offline bound) |"), std::string::npos) << r.out;
}

TEST(SimCli, JsonHasEveryRowAndTheGap) {
  testing::TempDir dir;
  const CliRun r = kvgate("sim --trace " + write(dir, "t.jsonl", kTrace) + " --tiers device:1,host:2 --policy lru --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const boost::json::object j = boost::json::parse(r.out).as_object();
  const auto& table = j.at("tables").as_array().at(0).as_object();
  EXPECT_EQ(table.at("tiers").as_array().size(), 2u);
  const auto& rows = table.at("results").as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("policy").as_string(), "lru");
  EXPECT_TRUE(rows[1].at("offline_bound").as_bool());
  EXPECT_TRUE(rows[0].at("tiers").as_object().contains("host"));
  EXPECT_TRUE(rows[0].at("gap_to_belady_points").is_double());
}

TEST(SimCli, ReplicasPrintOneCacheAndEveryRouter) {
  testing::TempDir dir;
  const CliRun r = kvgate("sim --trace " + write(dir, "t.jsonl", kTrace) + " --capacity 1 --replicas 2 --policy lru");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("### 2 replicas x device 1 blocks (lru), one cache of device 2 blocks"), std::string::npos) << r.out;
  // One cache of 2 blocks is the LRU row of the first test.
  EXPECT_NE(r.out.find("| one cache (2x the capacity) | 31.76 | 100.0 |"), std::string::npos) << r.out;
  for (const char* router : {"| cache_aware:host=0.1,disk=0.3,shared=0.4,load=0.1 |", "| round_robin |", "| random:seed=1 |"})
    EXPECT_NE(r.out.find(router), std::string::npos) << router;
  EXPECT_EQ(r.out.find("belady"), std::string::npos) << r.out;
}

TEST(SimCli, ReplicasJsonHasTheShareAndTheBalance) {
  testing::TempDir dir;
  const CliRun r = kvgate("sim --trace " + write(dir, "t.jsonl", kTrace) +
                          " --capacity 2 --replicas 1,3 --router round_robin,cache_aware:load=0.5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const boost::json::object j = boost::json::parse(r.out).as_object();
  const auto& clusters = j.at("clusters").as_array();
  ASSERT_EQ(clusters.size(), 6u);  // 2 replica counts x lru, s3fifo, cost
  const auto& t = clusters[3].as_object();
  EXPECT_EQ(t.at("replicas").as_int64(), 3);
  EXPECT_EQ(t.at("policy").as_string(), "lru");
  const auto& rows = t.at("results").as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("router").as_string(), "round_robin");
  EXPECT_EQ(rows[0].at("requests_per_replica").as_array().size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].at("load_balance").as_double(), 1.0);
  EXPECT_TRUE(rows[1].at("of_one_cache_pct").is_double());
  EXPECT_TRUE(j.at("tables").as_array().empty());
}

TEST(SimCli, ReplicaFlagsAreCheckedAsTheyAreParsed) {
  testing::TempDir dir;
  const std::string good = write(dir, "t.jsonl", kTrace);
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {" --capacity 2 --replicas 0", "--replicas: Value 0 not in range 1 to 1024"},
           {" --capacity 2 --router random", "--router requires --replicas"},
       }) {
    const CliRun r = kvgate("sim --trace " + good + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  }
}

TEST(SimCli, HelpListsEveryPolicy) {
  const CliRun r = kvgate("sim --help");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* name : {"  lru: ", "  s3fifo: ", "  cost: ", "  belady: "}) EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

TEST(SimCli, BadInputIsAClearError) {
  testing::TempDir dir;
  const std::string good = write(dir, "t.jsonl", kTrace);
  const std::string bad = write(dir, "bad.jsonl", std::string(kTrace) + "{\"timestamp\": 3, \"input_length\": 600}\n");
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--trace " + bad + " --capacity 2", "kvgate: error: " + bad + ":4: field \"output_length\" is missing"},
           {"--trace " + dir.sub("none.jsonl") + " --capacity 2", "kvgate: error: " + dir.sub("none.jsonl") + ": cannot open"},
           {"--trace " + good + " --capacity 2 --policy lfu", "kvgate: error: unknown eviction policy 'lfu' (known: lru,"},
           {"--trace " + good + " --capacity 2 --policy s3fifo:ghost=x",
            "kvgate: error: eviction policy 's3fifo': parameter 'ghost': 'x' is not a number"},
           {"--trace " + good + " --capacity lots", "kvgate: error: capacity 'lots' is not a block count"},
           {"--trace " + good + " --capacity 200%", "kvgate: error: capacity '200%' must be a percentage in (0, 100]"},
           {"--trace " + good + " --tiers host:2", "kvgate: error: tiers 'host:2' must start with device"},
           {"--trace " + good, "kvgate: error: sim: give --capacity"},
           {"--trace " + good + " --capacity 2 --replicas 2 --router kv",
            "kvgate: error: sim: unknown router 'kv' (routers: cache_aware, round_robin, random)"},
           {"--trace " + good + " --capacity 2 --replicas 2 --router cache_aware:speed=2",
            "kvgate: error: sim: router cache_aware has no parameter 'speed' (parameters: host, disk, shared, load)"},
           {"--trace " + good + " --capacity 2 --replicas 2 --policy lru,belady",
            "kvgate: error: sim: --policy belady: the bound needs each replica's future"},
       }) {
    const CliRun r = kvgate("sim " + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.substr(0, c.message.size()), c.message) << c.args;
  }
}

}  // namespace
}  // namespace kvgate
