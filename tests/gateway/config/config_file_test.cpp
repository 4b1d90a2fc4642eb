// The TOML config file: the defaults it starts from, the values it sets,
// and every kind of mistake, each reported with the file, line:column and
// the key to fix.
#include "gateway/config/config_file.h"
#include "tests/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "base/error.h"
#include "gateway/config/config_options.h"

namespace kvgate::config {
namespace {

// The message parse_config throws for `text` (the test fails if it accepts it).
std::string error_of(const std::string& text) {
  try {
    parse_config(text, "kvgate.toml");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << needle << "' not in: " << (haystack)

TEST(ConfigDefaults, AreTheDocumentedOnes) {
  const ServerConfig c;
  EXPECT_EQ(c.server.listen.str(), "127.0.0.1:8443");
  EXPECT_FALSE(c.server.plain_http);
  EXPECT_EQ(c.server.plain_listen.str(), "127.0.0.1:8080");
  EXPECT_EQ(c.server.io_threads, 1);
  EXPECT_EQ(c.server.max_connections, 4096);
  EXPECT_EQ(c.server.header_limit_bytes, 16 * 1024);
  EXPECT_EQ(c.server.body_limit_bytes, 4 * 1024 * 1024);
  EXPECT_EQ(c.server.read_timeout_ms, 30000);
  EXPECT_EQ(c.server.idle_timeout_ms, 60000);
  EXPECT_EQ(c.server.write_timeout_ms, 30000);
  EXPECT_EQ(c.server.shutdown_deadline_ms, 10000);
  EXPECT_TRUE(c.tls.cert_file.empty());
  EXPECT_TRUE(c.tls.key_file.empty());
  EXPECT_TRUE(c.self_signed());
  EXPECT_EQ(c.model.backend, "auto");
  EXPECT_EQ(c.model.block_size, 16);
  EXPECT_EQ(c.model.kv_budget_bytes, kAutoBytes);
  EXPECT_EQ(c.kv_tiers.host_bytes, kAutoBytes);
  EXPECT_EQ(c.kv_tiers.disk_bytes, kAutoBytes);
  EXPECT_EQ(c.model.max_step_tokens, 512);
  EXPECT_EQ(c.model.max_running, 256);
  EXPECT_TRUE(c.model.chunked_prefill);
  EXPECT_TRUE(c.model.prefix_cache);
  EXPECT_EQ(c.model.max_waiting, 256);
  EXPECT_EQ(c.limits.max_prompt_tokens, 0);
  EXPECT_EQ(c.limits.max_output_tokens, 0);
  EXPECT_EQ(c.data.dir, "kvgate-data");
  EXPECT_EQ(c.admin_token_path(), "kvgate-data/admin-token");
  EXPECT_EQ(c.tls_cert_path(), "kvgate-data/tls/self-signed.crt");
  EXPECT_EQ(c.tls_key_path(), "kvgate-data/tls/self-signed.key");
  EXPECT_EQ(c.log.level, "info");
  EXPECT_EQ(c.served_model_name(), "stories260K");
}

TEST(ConfigDefaults, PassEveryCheck) {
  const ServerConfig c;
  for (const Option& o : all_options()) EXPECT_EQ(check_value(o, o.get(c)), "") << o.name();
  EXPECT_TRUE(check_config(c).empty());
}

TEST(ConfigDefaults, AnEmptyFileIsTheDefault) {
  EXPECT_EQ(parse_config("", "empty.toml"), ServerConfig{});
  EXPECT_EQ(parse_config("# nothing but a comment\n[server]\n", "x.toml"), ServerConfig{});
}

TEST(ConfigDefaults, BundledModelFollowsKvgateShared) {
  const char* old = std::getenv("KVGATE_SHARED");
  const std::string saved = old ? old : "";
  ::setenv("KVGATE_SHARED", "/opt/kvgate-shared", 1);
  EXPECT_EQ(ServerConfig{}.model.path, "/opt/kvgate-shared/models/stories260K.gguf");
  ::unsetenv("KVGATE_SHARED");
  EXPECT_EQ(ServerConfig{}.model.path, "../shared/models/stories260K.gguf");
  if (old) ::setenv("KVGATE_SHARED", saved.c_str(), 1);
}

TEST(ConfigFile, SetsEveryKindOfValue) {
  const ServerConfig c = parse_config(R"(
[server]
listen = "0.0.0.0:443"
plain_http = true
plain_listen = "[::1]:8080"
io_threads = 4
header_limit_bytes = "32KiB"
body_limit_bytes = 1048576
shutdown_deadline_ms = 0

[tls]
cert_file = "/etc/kvgate/cert.pem"
key_file = "/etc/kvgate/key.pem"

[model]
path = "models/tiny.gguf"
backend = "cpu"
kv_budget = "2GiB"
max_running = 0
prefix_cache = false

[limits]
max_output_tokens = 256

[data]
dir = "/var/lib/kvgate"

[log]
level = "debug"
)",
                                      "kvgate.toml");
  EXPECT_EQ(c.server.listen, (ListenAddress{"0.0.0.0", 443}));
  EXPECT_TRUE(c.server.plain_http);
  EXPECT_EQ(c.server.plain_listen, (ListenAddress{"::1", 8080}));
  EXPECT_EQ(c.server.io_threads, 4);
  EXPECT_EQ(c.server.header_limit_bytes, 32 * 1024);
  EXPECT_EQ(c.server.body_limit_bytes, 1048576);
  EXPECT_EQ(c.server.shutdown_deadline_ms, 0);
  EXPECT_EQ(c.server.read_timeout_ms, 30000);  // untouched keys keep their defaults
  EXPECT_EQ(c.tls_cert_path(), "/etc/kvgate/cert.pem");
  EXPECT_FALSE(c.self_signed());
  EXPECT_EQ(c.model.path, "models/tiny.gguf");
  EXPECT_EQ(c.served_model_name(), "tiny");
  EXPECT_EQ(c.model.backend, "cpu");
  EXPECT_EQ(c.model.kv_budget_bytes, int64_t{2} << 30);
  EXPECT_EQ(c.model.max_running, 0);
  EXPECT_FALSE(c.model.prefix_cache);
  EXPECT_TRUE(c.model.chunked_prefill);
  EXPECT_EQ(c.limits.max_output_tokens, 256);
  EXPECT_EQ(c.data.dir, "/var/lib/kvgate");
  EXPECT_EQ(c.admin_token_path(), "/var/lib/kvgate/admin-token");
  EXPECT_EQ(c.log.level, "debug");
}

TEST(ConfigFile, DottedKeysAndInlineTablesMeanTheSame) {
  const ServerConfig a = parse_config("server.io_threads = 3\nmodel = { block_size = 32 }\n", "a.toml");
  EXPECT_EQ(a.server.io_threads, 3);
  EXPECT_EQ(a.model.block_size, 32);
}

TEST(ConfigFile, LoadsFromDiskAndNamesAMissingFile) {
  const kvgate::testing::TempDir dir;
  const std::string path = dir.sub("kvgate-config-test.toml");
  std::ofstream(path) << "[server]\nio_threads = 2\n";
  EXPECT_EQ(load_config(path).server.io_threads, 2);
  std::ofstream(path) << "[server]\nio_threads = 0\n";
  try {
    load_config(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), path + ":2:14: server.io_threads must be at least 1 (got 0)");
  }
  std::remove(path.c_str());
  try {
    load_config(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "cannot open config file " + path);
  }
  try {
    load_config(::testing::TempDir());
    FAIL();
  } catch (const Error& e) {
    EXPECT_HAS(e.what(), "config file");
  }
}

// The KV sizes may be "auto" (sized at start) or a count, which is kept
// exactly; no other byte count takes "auto".
TEST(ConfigFile, KvSizesAreAutoOrExactlyAsGiven) {
  const ServerConfig a = parse_config("[model]\nkv_budget = \"auto\"\n[kv_tiers]\nhost_bytes = \"auto\"\n", "kvgate.toml");
  EXPECT_EQ(a.model.kv_budget_bytes, kAutoBytes);
  EXPECT_EQ(a.kv_tiers.host_bytes, kAutoBytes);
  const ServerConfig n = parse_config(
      "[model]\nkv_budget = \"1GiB\"\n[kv_tiers]\nhost_bytes = 0\ndisk_bytes = \"16GiB\"\n", "kvgate.toml");
  EXPECT_EQ(n.model.kv_budget_bytes, int64_t{1} << 30);
  EXPECT_EQ(n.kv_tiers.host_bytes, 0);
  EXPECT_EQ(n.kv_tiers.disk_bytes, int64_t{16} << 30);
  EXPECT_HAS(error_of("[server]\nbody_limit_bytes = \"auto\"\n"), "server.body_limit_bytes: 'auto' is not a byte count");
  EXPECT_HAS(error_of("[model]\nkv_budget = -1\n"), "model.kv_budget must be at least 1 or \"auto\" (got -1)");
  EXPECT_HAS(error_of("[model]\nkv_budget = \"Auto\"\n"), "'Auto' is not a byte count");
}

TEST(ConfigErrors, SyntaxErrorNamesLineAndColumn) {
  const std::string e = error_of("[server]\nio_threads = 2\nlisten = \"127.0.0.1:8443\n");
  EXPECT_HAS(e, "kvgate.toml:3:");
  EXPECT_HAS(e, "TOML syntax error");
  EXPECT_HAS(error_of("[server\n"), "kvgate.toml:1:");
  EXPECT_HAS(error_of("[server]\nio_threads = 1\nio_threads = 2\n"), "kvgate.toml:3:");
}

TEST(ConfigErrors, UnknownKeyIsRefusedWithTheNearestValidOne) {
  const std::string e = error_of("[server]\nio_thread = 2\n");
  EXPECT_HAS(e, "kvgate.toml:2:1: unknown key 'server.io_thread'; did you mean server.io_threads?");
  EXPECT_HAS(error_of("[server]\nlisten = \"127.0.0.1:1\"\n  lisetn = \"x\"\n"),
             "kvgate.toml:3:3: unknown key 'server.lisetn'; did you mean server.listen?");
  EXPECT_HAS(error_of("[model]\nkv_budget_bytes = \"4GiB\"\n"), "did you mean model.kv_budget?");
  // The right key under the wrong table.
  EXPECT_HAS(error_of("[server]\nbackend = \"cpu\"\n"), "did you mean model.backend (in [model])?");
  // A key at the top level that belongs in a table.
  EXPECT_HAS(error_of("listen = \"127.0.0.1:1\"\n"),
             "kvgate.toml:1:1: unknown key 'listen' at the top level; did you mean server.listen (in [server])?");
  // Nothing near: no guess.
  const std::string far = error_of("[server]\nfrobnicate = 1\n");
  EXPECT_HAS(far, "unknown key 'server.frobnicate'");
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST(ConfigErrors, UnknownTableIsRefusedWithTheNearestValidOne) {
  EXPECT_HAS(error_of("[sever]\nio_threads = 2\n"), "kvgate.toml:1:2: unknown table [sever]; did you mean [server]?");
  EXPECT_HAS(error_of("[models]\npath = \"x\"\n"), "did you mean [model]?");
  EXPECT_HAS(error_of("[[server]]\nio_threads = 2\n"), "server must be a table ([server]), not an array");
  EXPECT_HAS(error_of("[model.extra]\nx = 1\n"), "unknown key 'model.extra'");
}

TEST(ConfigErrors, WrongTypeNamesTheKeyAndWhatItMustBe) {
  EXPECT_HAS(error_of("[server]\nio_threads = \"4\"\n"),
             "kvgate.toml:2:14: server.io_threads must be an integer, not a string");
  EXPECT_HAS(error_of("[server]\nplain_http = 1\n"), "server.plain_http must be a boolean (true or false), not an integer");
  EXPECT_HAS(error_of("[server]\nlisten = 8443\n"), "server.listen must be a string \"host:port\", not an integer");
  EXPECT_HAS(error_of("[model]\nblock_size = 16.0\n"), "model.block_size must be an integer, not a floating-point number");
  EXPECT_HAS(error_of("[model]\nkv_budget = true\n"), "model.kv_budget must be a byte count");
  EXPECT_HAS(error_of("[data]\ndir = [\"a\"]\n"), "data.dir must be a string, not an array");
  EXPECT_HAS(error_of("[log]\nlevel = 1979-05-27\n"), "log.level must be a string, not a date");
  EXPECT_HAS(error_of("server = 5\n"), "server must be a table ([server]), not an integer");
}

TEST(ConfigErrors, OutOfRangeNamesTheKeyTheBoundAndTheValue) {
  EXPECT_HAS(error_of("[server]\nio_threads = 0\n"), "kvgate.toml:2:14: server.io_threads must be at least 1 (got 0)");
  EXPECT_HAS(error_of("[server]\nmax_connections = -5\n"), "server.max_connections must be at least 1 (got -5)");
  EXPECT_HAS(error_of("[server]\nread_timeout_ms = 0\n"), "server.read_timeout_ms must be at least 1 (got 0)");
  EXPECT_HAS(error_of("[server]\nbody_limit_bytes = 0\n"), "server.body_limit_bytes must be at least 1 (got 0)");
  EXPECT_HAS(error_of("[server]\nheader_limit_bytes = \"100MiB\"\n"),
             "server.header_limit_bytes must be at most 64MiB (got 100MiB)");
  EXPECT_HAS(error_of("[model]\nblock_size = 4294967296\n"), "model.block_size must be at most 1024");
  EXPECT_HAS(error_of("[model]\nmax_waiting = 0\n"), "model.max_waiting must be at least 1 (got 0)");
  EXPECT_HAS(error_of("[limits]\nmax_prompt_tokens = -1\n"), "limits.max_prompt_tokens must be at least 0 (got -1)");
  EXPECT_HAS(error_of("[model]\nbackend = \"gpu\"\n"),
             "kvgate.toml:2:11: model.backend must be one of auto, cpu, cuda (got \"gpu\")");
  EXPECT_HAS(error_of("[log]\nlevel = \"verbose\"\n"), "log.level must be one of error, warn, info, debug");
  EXPECT_HAS(error_of("[model]\npath = \"\"\n"), "model.path must not be empty");
  EXPECT_HAS(error_of("[data]\ndir = \"a\\u0000b\"\n"), "data.dir must not contain control characters");
  EXPECT_HAS(error_of("[server]\nlisten = \"127.0.0.1\"\n"), "kvgate.toml:2:10: server.listen must be host:port");
  EXPECT_HAS(error_of("[server]\nlisten = \"127.0.0.1:99999\"\n"), "out of range");
}

TEST(ConfigErrors, BadByteSizeNamesTheKeyAndTheText) {
  EXPECT_HAS(error_of("[model]\nkv_budget = \"4 gigs\"\n"), "kvgate.toml:2:13: model.kv_budget: '4 gigs' is not a byte count");
  EXPECT_HAS(error_of("[model]\nkv_budget = \"0\"\n"), "model.kv_budget must be at least 1 (got 0)");
}

TEST(ConfigErrors, CertWithoutKeyAndKeyWithoutCert) {
  EXPECT_HAS(error_of("[tls]\ncert_file = \"c.pem\"\n"),
             "kvgate.toml:2:13: tls.cert_file is set but tls.key_file is not: give both, or neither");
  EXPECT_HAS(error_of("[tls]\nkey_file = \"k.pem\"\n"), "kvgate.toml:2:12: tls.key_file is set but tls.cert_file is not");
}

// Block events are encrypted with keys from the internal token, so they
// need one; a bare port is loopback.
TEST(ConfigErrors, BlockEventsNeedTheInternalTokenAndABarePortIsLoopback) {
  EXPECT_HAS(error_of("[cluster]\nblock_events = \"tcp://127.0.0.1:5557\"\n"),
             "cluster.block_events needs cluster.internal_token_file");
  EXPECT_HAS(error_of("[cluster]\nblock_events = \"udp://x\"\ninternal_token_file = \"t\"\n"),
             "cluster.block_events must be a port (loopback) or a ZeroMQ endpoint");
  const ServerConfig c = parse_config("[cluster]\nblock_events = \"5557\"\ninternal_token_file = \"t\"\n", "x");
  EXPECT_EQ(block_events_endpoint(c.cluster.block_events), "tcp://127.0.0.1:5557");
  EXPECT_EQ(block_events_endpoint("ipc:///run/k"), "ipc:///run/k");
}

TEST(ConfigErrors, TheMetricsListenerIsAnAddressOfItsOwn) {
  EXPECT_HAS(error_of("[metrics]\nlisten = \"localhost\"\n"), "kvgate.toml:2:10: metrics.listen must be host:port");
  EXPECT_HAS(error_of("[server]\nlisten = \"127.0.0.1:9000\"\n[metrics]\nlisten = \"127.0.0.1:9000\"\n"),
             "metrics.listen is the address of another listener (127.0.0.1:9000)");
  EXPECT_EQ(parse_config("[metrics]\nlisten = \"127.0.0.1:9464\"\n", "x").metrics.listen, "127.0.0.1:9464");
  EXPECT_EQ(parse_config("", "x").metrics.listen, "");  // default: on the API listener, behind the admin token
}

TEST(ConfigErrors, PlainAndTlsListenersNeedTheirOwnPorts) {
  EXPECT_HAS(error_of("[server]\nlisten = \"127.0.0.1:9000\"\nplain_http = true\nplain_listen = \"127.0.0.1:9000\"\n"),
             "kvgate.toml:4:16: server.plain_listen is the same address as server.listen (127.0.0.1:9000)");
  // Off, the plain address is not used, so it may be anything valid; port 0 never collides.
  EXPECT_NO_THROW(parse_config("[server]\nlisten = \"127.0.0.1:9000\"\nplain_listen = \"127.0.0.1:9000\"\n", "x"));
  EXPECT_NO_THROW(
      parse_config("[server]\nlisten = \"127.0.0.1:0\"\nplain_http = true\nplain_listen = \"127.0.0.1:0\"\n", "x"));
}

TEST(ConfigErrors, EveryProblemIsReportedAtOnceInFileOrder) {
  const std::string e = error_of("[server]\nio_threads = 0\nlisten = 1\n[model]\nbackend = \"tpu\"\n[bogus]\n");
  EXPECT_HAS(e, "4 problems in the configuration:");
  const size_t a = e.find(":2:14: server.io_threads");
  const size_t b = e.find(":3:10: server.listen");
  const size_t c = e.find(":5:11: model.backend");
  const size_t d = e.find(":6:2: unknown table [bogus]");
  ASSERT_NE(a, std::string::npos) << e;
  ASSERT_NE(b, std::string::npos) << e;
  ASSERT_NE(c, std::string::npos) << e;
  ASSERT_NE(d, std::string::npos) << e;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_LT(c, d);
}

TEST(ConfigErrors, InvalidUtf8AndBinaryAreSyntaxErrors) {
  EXPECT_HAS(error_of(std::string("[server]\nlisten = \"\xff\xfe\"\n")), "TOML syntax error");
  EXPECT_HAS(error_of(std::string("[server]\0io_threads = 1\n", 25)), "TOML syntax error");
}

}  // namespace
}  // namespace kvgate::config
