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
       }) {
    const CliRun r = kvgate("sim " + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.substr(0, c.message.size()), c.message) << c.args;
  }
}

}  // namespace
}  // namespace kvgate
