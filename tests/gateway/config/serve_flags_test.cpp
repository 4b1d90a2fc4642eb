// `kvgate serve` flags: one per option, layered flag > file > default, with
// errors that name the flag, and --config / --print-config.
#include "gateway/config/serve_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "gateway/config/config_file.h"
#include "tests/temp_dir.h"

namespace kvgate::config {
namespace {

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << needle << "' not in: " << (haystack)

// A `serve` subcommand with the flags, parsed from `args`.
struct Serve {
  CLI::App app{"kvgate"};
  CLI::App* cmd = app.add_subcommand("serve");
  std::shared_ptr<ServeFlags> flags = ServeFlags::add_to(*cmd, ServerCommand::kServe);

  explicit Serve(const std::string& args) { app.parse("serve " + args, false); }
  // Arguments as a shell would pass them, empty ones included.
  explicit Serve(std::vector<std::string> argv) {
    argv.insert(argv.begin(), "serve");
    std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
    app.parse(argv);
  }
  ServerConfig config() const { return flags->resolve(); }
};

std::string error_of(const std::string& args) {
  try {
    Serve s(args);
    s.config();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << args;
  return {};
}

const Option* find_option_by_flag(std::string_view flag) {
  for (const Option& o : all_options())
    if (o.flag == flag) return &o;
  ADD_FAILURE() << "no option has --" << flag;
  return &all_options()[0];
}

// A folder of this process's own: ctest runs each test in a process of its
// own, two at a time, and a shared name let two of them write one file.
std::string temp_config(const std::string& text) {
  static const kvgate::testing::TempDir dir;
  static int n = 0;
  const std::string path = dir.sub("flags-" + std::to_string(n++) + ".toml");
  std::ofstream(path) << text;
  return path;
}

TEST(ServeFlags, NoFlagsIsTheDefault) {
  Serve s("");
  EXPECT_EQ(s.config(), ServerConfig{});
  EXPECT_FALSE(s.flags->print_config());
  EXPECT_TRUE(s.flags->config_file().empty());
}

TEST(ServeFlags, EveryOptionHasItsOwnFlag) {
  std::set<std::string> flags;
  for (const Option& o : all_options()) {
    EXPECT_TRUE(flags.insert(std::string(o.flag)).second) << "two options share --" << o.flag;
    EXPECT_TRUE(o.is_flag_of(ServerCommand::kServe) || o.is_flag_of(ServerCommand::kRoute)) << o.name();
  }
}

// Each command has the flags of the options it uses and no others: the
// front runs no engine, so `route --kv-budget` is an unknown option (its
// --help listed the engine's flags, which meant nothing there), and a
// replica routes nothing, so `serve --router` is one too.
TEST(ServeFlags, EachCommandHasTheFlagsOfItsOwnOptionsOnly) {
  for (const ServerCommand command : {ServerCommand::kServe, ServerCommand::kRoute}) {
    CLI::App app{"kvgate"};
    CLI::App* cmd = app.add_subcommand("x");
    const auto flags = ServeFlags::add_to(*cmd, command);
    for (const Option& o : all_options())
      EXPECT_EQ(cmd->get_option_no_throw("--" + std::string(o.flag)) != nullptr, o.is_flag_of(command)) << o.name();
  }
  for (const char* engine : {"kv-budget", "cuda-graphs", "gpu-memory-percent", "backend", "max-running",
                             "eviction-policy", "kv-host-bytes", "kv-host-policy", "kv-disk-bytes", "kv-redis",
                             "block-events", "metrics-listen"})
    EXPECT_FALSE(find_option_by_flag(engine)->is_flag_of(ServerCommand::kRoute)) << engine;
  for (const char* edge : {"listen", "tls-cert", "model", "model-name", "block-size", "kv-type", "prefix-cache",
                           "max-output-tokens", "data-dir", "admin-token-file", "internal-token-file", "log-level"}) {
    EXPECT_TRUE(find_option_by_flag(edge)->is_flag_of(ServerCommand::kRoute)) << edge;
    EXPECT_TRUE(find_option_by_flag(edge)->is_flag_of(ServerCommand::kServe)) << edge;
  }
  for (const char* front : {"replicas", "replica-ca", "router", "health-interval-ms"})
    EXPECT_FALSE(find_option_by_flag(front)->is_flag_of(ServerCommand::kServe)) << front;
  // A flag the command lacks is CLI11's unknown option; the file may still hold its key.
  CLI::App app{"kvgate"};
  CLI::App* route = app.add_subcommand("route");
  const auto flags = ServeFlags::add_to(*route, ServerCommand::kRoute);
  EXPECT_THROW(app.parse("route --kv-budget 1G", false), CLI::ExtrasError);
  CLI::App app2{"kvgate"};
  CLI::App* route2 = app2.add_subcommand("route");
  const auto flags2 = ServeFlags::add_to(*route2, ServerCommand::kRoute);
  const std::string path = temp_config("[model]\nkv_budget = \"1GiB\"\n");
  app2.parse("route --config " + path + " --block-size 32", false);
  const ServerConfig c = flags2->resolve();
  EXPECT_EQ(c.model.kv_budget_bytes, int64_t{1} << 30);
  EXPECT_EQ(c.model.block_size, 32);
}

TEST(ServeFlags, SetValuesOfEveryKind) {
  Serve s("--listen 0.0.0.0:9443 --plain-http --plain-listen 0.0.0.0:9080 --io-threads 3 "
          "--header-limit-bytes 32KiB --body-limit-bytes 1000 --model m.gguf --model-name tiny --backend cpu "
          "--kv-budget 2GiB --no-prefix-cache --data-dir /tmp/d --log-level warn --max-output-tokens 64");
  const ServerConfig c = s.config();
  EXPECT_EQ(c.server.listen.str(), "0.0.0.0:9443");
  EXPECT_TRUE(c.server.plain_http);
  EXPECT_EQ(c.server.plain_listen.str(), "0.0.0.0:9080");
  EXPECT_EQ(c.server.io_threads, 3);
  EXPECT_EQ(c.server.header_limit_bytes, 32768);
  EXPECT_EQ(c.server.body_limit_bytes, 1000);
  EXPECT_EQ(c.model.path, "m.gguf");
  EXPECT_EQ(c.served_model_name(), "tiny");
  EXPECT_EQ(c.model.backend, "cpu");
  EXPECT_EQ(c.model.kv_budget_bytes, int64_t{2} << 30);
  EXPECT_FALSE(c.model.prefix_cache);
  EXPECT_TRUE(c.model.chunked_prefill);
  EXPECT_EQ(c.data.dir, "/tmp/d");
  EXPECT_EQ(c.log.level, "warn");
  EXPECT_EQ(c.limits.max_output_tokens, 64);
}

TEST(ServeFlags, KvSizesTakeAutoOrACountKeptExactly) {
  const ServerConfig c = Serve("--kv-budget 1GiB --kv-host-bytes 0 --kv-disk-bytes 16GiB").config();
  EXPECT_EQ(c.model.kv_budget_bytes, int64_t{1} << 30);
  EXPECT_EQ(c.kv_tiers.host_bytes, 0);
  EXPECT_EQ(c.kv_tiers.disk_bytes, int64_t{16} << 30);
  const std::string path = temp_config("[model]\nkv_budget = \"2GiB\"\n");
  EXPECT_EQ(Serve("--config " + path + " --kv-budget auto").config().model.kv_budget_bytes, kAutoBytes);
  EXPECT_HAS(error_of("--body-limit-bytes auto"), "--body-limit-bytes: 'auto' is not a byte count");
}

TEST(ServeFlags, FlagBeatsFileBeatsDefault) {
  const std::string path = temp_config(
      "[server]\nio_threads = 2\nidle_timeout_ms = 5000\nplain_http = true\n[model]\nprefix_cache = false\n"
      "kv_budget = \"2GiB\"\n");
  Serve s("--config " + path + " --io-threads 6 --prefix-cache");
  const ServerConfig c = s.config();
  EXPECT_EQ(s.flags->config_file(), path);
  EXPECT_EQ(c.server.io_threads, 6);            // flag over file
  EXPECT_TRUE(c.model.prefix_cache);            // --x over the file's false
  EXPECT_EQ(c.server.idle_timeout_ms, 5000);    // file over default
  EXPECT_TRUE(c.server.plain_http);             // file over default
  EXPECT_EQ(c.model.kv_budget_bytes, int64_t{2} << 30);
  EXPECT_EQ(c.server.read_timeout_ms, 30000);   // default
  Serve off("--config " + path + " --no-plain-http");
  EXPECT_FALSE(off.config().server.plain_http);  // --no-x over the file's true
}

TEST(ServeFlags, CrossOptionRulesSeeTheLayersTogether) {
  // The file names a certificate, the flag its key: together they are whole.
  const std::string path = temp_config("[tls]\ncert_file = \"c.pem\"\n");
  Serve s("--config " + path + " --tls-key k.pem");
  EXPECT_EQ(s.config().tls_key_path(), "k.pem");
  EXPECT_HAS(error_of("--config " + path), path + ":2:13: tls.cert_file is set but tls.key_file is not");
  EXPECT_HAS(error_of("--tls-key k.pem"), "--tls-key: tls.key_file is set but tls.cert_file is not");
  EXPECT_HAS(error_of("--listen 127.0.0.1:8080 --plain-http"),
             "server.plain_listen is the same address as server.listen (127.0.0.1:8080)");
}

TEST(ServeFlags, BadValuesNameTheFlag) {
  EXPECT_HAS(error_of("--io-threads 0"), "--io-threads: server.io_threads must be at least 1 (got 0)");
  EXPECT_HAS(error_of("--io-threads four"), "--io-threads: 'four' is not an integer");
  EXPECT_HAS(error_of("--io-threads 99999999999999999999"), "--io-threads: '99999999999999999999' is not an integer in range");
  EXPECT_HAS(error_of("--kv-budget lots"), "--kv-budget: 'lots' is not a byte count");
  EXPECT_HAS(error_of("--listen localhost"), "--listen: server.listen must be host:port");
  EXPECT_HAS(error_of("--backend tpu"), "--backend: model.backend must be one of auto, cpu, cuda (got \"tpu\")");
  try {
    Serve s(std::vector<std::string>{"--data-dir", ""});
    s.config();
    ADD_FAILURE() << "an empty --data-dir was accepted";
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "--data-dir: data.dir must not be empty");
  }
}

TEST(ServeFlags, FileAndFlagProblemsAreReportedTogether) {
  const std::string path = temp_config("[server]\nio_threads = 0\n");
  const std::string e = error_of("--config " + path + " --block-size 0");
  EXPECT_HAS(e, "2 problems in the configuration:");
  EXPECT_HAS(e, path + ":2:14: server.io_threads must be at least 1");
  EXPECT_HAS(e, "--block-size: model.block_size must be at least 1");
  EXPECT_LT(e.find(path + ":2:14"), e.find("--block-size"));
}

TEST(ServeFlags, MissingConfigFileIsNamed) {
  EXPECT_HAS(error_of("--config /nonexistent/kvgate.toml"), "cannot open config file /nonexistent/kvgate.toml");
}

TEST(ServeFlags, PrintConfigIsAFlag) {
  Serve s("--print-config --io-threads 2");
  EXPECT_TRUE(s.flags->print_config());
  EXPECT_EQ(s.config().server.io_threads, 2);
}

TEST(ServeFlags, HelpShowsEachFlagWithItsDefaultAndKey) {
  Serve s("");
  const std::string help = s.cmd->help();
  EXPECT_HAS(help, "--kv-budget");
  EXPECT_HAS(help, "1GiB");
  EXPECT_HAS(help, "[model.kv_budget]");
  EXPECT_HAS(help, "--no-prefix-cache");
  EXPECT_HAS(help, "Config [server]");
}

}  // namespace
}  // namespace kvgate::config
