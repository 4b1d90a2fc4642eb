// --print-config: to_toml writes what parse_config reads back to the same
// config; and the sample config (ops/kvgate.toml) and the docs
// (docs/gateway.md) name every option, at its default.
#include "gateway/config/config_toml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "gateway/config/config_file.h"
#include "gateway/config/config_options.h"

namespace kvgate::config {
namespace {

// a + b + c, built with append: gcc 12's -Wrestrict misfires on
// "literal" + std::string chains at -O3.
std::string cat(std::string_view a, std::string_view b, std::string_view c) {
  std::string s(a);
  s.append(b).append(c);
  return s;
}

std::string source_file(const std::string& rel) {
  std::ifstream in(std::string(KVGATE_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in) << "cannot open " << rel;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PrintConfig, DefaultsRoundTrip) {
  const ServerConfig c;
  const std::string text = to_toml(c);
  EXPECT_EQ(parse_config(text, "printed"), c) << text;
}

TEST(PrintConfig, EveryOptionIsPrintedUnderItsTable) {
  const std::string text = to_toml(ServerConfig{});
  for (std::string_view t : option_tables()) EXPECT_NE(text.find(cat("\n[", t, "]\n")), std::string::npos) << t;
  for (const Option& o : all_options())
    EXPECT_NE(text.find(cat("\n", o.key, " = ")), std::string::npos) << o.name();
  EXPECT_NE(text.find("kv_budget = \"auto\""), std::string::npos) << text;
  EXPECT_NE(text.find("host_bytes = \"auto\""), std::string::npos) << text;
  EXPECT_NE(text.find("listen = \"127.0.0.1:8443\""), std::string::npos) << text;
}

TEST(PrintConfig, ChangedValuesRoundTrip) {
  ServerConfig c;
  c.server.listen = {"::1", 0};
  c.server.plain_http = true;
  c.server.plain_listen = {"0.0.0.0", 80};
  c.server.io_threads = 7;
  c.server.header_limit_bytes = 1500;  // not a whole KiB: printed as a plain count
  c.server.body_limit_bytes = int64_t{3} << 30;
  c.server.shutdown_deadline_ms = 0;
  c.tls.cert_file = "/etc/kvgate/cert \"quoted\" \\ path.pem";
  c.tls.key_file = "/etc/kvgate/clé.pem";  // UTF-8 survives
  c.model.path = "C:\\models\\x.gguf";
  c.model.name = "my-model";
  c.model.backend = "cuda";
  c.model.kv_budget_bytes = 9007199254740993;
  c.kv_tiers.host_bytes = 0;
  c.kv_tiers.disk_bytes = int64_t{16} << 30;
  c.model.max_running = 0;
  c.model.chunked_prefill = false;
  c.model.prefix_cache = false;
  c.limits.max_prompt_tokens = 100;
  c.limits.max_output_tokens = 50;
  c.data.dir = "/var/lib/kvgate";
  c.admin.token_file = "/run/secrets/admin";
  c.log.level = "error";
  ASSERT_TRUE(check_config(c).empty());
  const std::string text = to_toml(c);
  EXPECT_EQ(parse_config(text, "printed"), c) << text;
}

// Each option set to its minimum and to its maximum, one at a time.
TEST(PrintConfig, RangeEndsRoundTrip) {
  for (const Option& o : all_options()) {
    if (o.kind != OptionKind::kInt && o.kind != OptionKind::kBytes) continue;
    for (int64_t v : {o.min, o.max}) {
      ServerConfig c;
      ASSERT_EQ(check_value(o, v), "") << o.name() << " " << v;
      o.set(c, v);
      EXPECT_EQ(parse_config(to_toml(c), "printed"), c) << o.name() << " = " << v;
    }
  }
}

TEST(SampleConfig, NamesEveryOptionAtItsDefault) {
  const std::string text = source_file("ops/kvgate.toml");
  ServerConfig expected;
  expected.model.path = "../shared/models/stories260K.gguf";  // the default when KVGATE_SHARED is unset
  EXPECT_EQ(parse_config(text, "ops/kvgate.toml"), expected);
  for (const Option& o : all_options())
    EXPECT_NE(text.find(cat("\n", o.key, " = ")), std::string::npos) << o.name() << " missing";
}

TEST(Docs, ConfigurationSectionNamesEveryOptionAndFlag) {
  const std::string doc = source_file("docs/gateway.md");
  const size_t start = doc.find("## Configuration");
  ASSERT_NE(start, std::string::npos);
  const size_t end = doc.find("\n## ", start + 1);
  const std::string section = doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
  for (const Option& o : all_options()) {
    EXPECT_NE(section.find(cat("`", o.key, "`")), std::string::npos) << o.name();
    EXPECT_NE(section.find(cat("`--", o.flag, "`")), std::string::npos) << o.flag;
  }
  EXPECT_NE(section.find("`--config FILE`"), std::string::npos);
  EXPECT_NE(section.find("`--print-config`"), std::string::npos);
}

}  // namespace
}  // namespace kvgate::config
