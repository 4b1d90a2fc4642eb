// DESIGN.md's one-way dependencies between modules, checked on every
// project #include in the source tree. A module's dependencies are what its
// files include: if this test passes, no arrow points back up.
//
// The rules (a path is relative to the source root):
//   base/      (error.h, mutex.h) uses nothing of ours; every module may use it
//   policies/  uses policies/ only
//   cache/     cache/, policies/
//   tenancy/   tenancy/ only
//   engine/    engine/, cache/, policies/
//   kernels/   kernels/, the Backend seam headers, cache/ids.h
//   gateway/   anything but tests/, in three parts:
//     the edge (server/ openai/ anthropic/ serving/ admin/ metrics/ config/ client/)
//              nothing of cluster/, tools/ or cli/; serving/ nothing of
//              admin/ (cli/ mounts admin/'s routes beside serving/'s);
//              anthropic/ (Anthropic's JSON, mapped onto openai/'s chat
//              machinery) only itself, openai/ and json/ of gateway/,
//              and openai/ nothing of anthropic/;
//              client/ (the HTTPS client) only itself and base/error.h
//     cluster/ wire/ (the formats both ends share) nothing of gateway/
//              outside it but json/; route/ (the routing core) only itself,
//              cache/ and policies/; replica/ and front/ not each other: the
//              two ends meet only in wire/
//     json/    (typed reads of JSON fields, below openai/ and cluster/wire/)
//              nothing of gateway/ outside it
//     template/ (the Jinja interpreter, below openai/ and cli/) nothing of
//              gateway/ outside it: a model's template sees only its context
//     tools/   nothing of the server: only tools/, client/, cluster/route/,
//              cache/, policies/ and base/error.h
//   only gateway/cli/ (and gateway/main.cpp) includes gateway/cli/
//   ops/       ops/ only (kvgatectl is a client of the HTTP API)
//   nothing    includes tests/
// and inside engine/:
//   the seam headers include only each other, base/, cache/ids.h and cache/hash128.h
//   model/     not sched/, cpu/, text/, tokenizer/
//   tokenizer/ not sched/, cpu/, text/, sampling/
//   cpu/       not sched/, tokenizer/, text/, sampling/
//   sampling/  not sched/, tokenizer/, text/, model/; of cpu/ only vec_math.h
//   text/      not sched/, cpu/, sampling/
//   grammar/   only itself, base/ and cache/ids.h (the vocabulary arrives as byte strings)
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace kvgate {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kModules = {"base", "policies", "cache", "tenancy", "engine", "kernels", "gateway", "ops"};

// The Backend seam: the only engine/ headers kernels/ may see.
const std::set<std::string> kSeamHeaders = {"engine/backend.h", "engine/batch.h", "engine/model_config.h",
                                            "engine/kv_layout.h", "engine/weights_view.h",
                                            "engine/rope_angles.h"};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string module_of(const std::string& path) { return path.substr(0, path.find('/')); }

// The three parts of gateway/ (see the rules above).
std::optional<std::string> why_forbidden_in_gateway(const std::string& file, const std::string& target) {
  auto under = [](const std::string& path, std::initializer_list<const char*> dirs) {
    return std::any_of(dirs.begin(), dirs.end(), [&](const char* d) { return starts_with(path, d); });
  };
  if (starts_with(target, "gateway/cli/") && !starts_with(file, "gateway/cli/") && file != "gateway/main.cpp")
    return "only gateway/cli/ puts the parts together";
  if (under(file, {"gateway/server/", "gateway/openai/", "gateway/anthropic/", "gateway/serving/", "gateway/admin/",
                   "gateway/metrics/", "gateway/config/", "gateway/client/"}) &&
      under(target, {"gateway/cluster/", "gateway/tools/"}))
    return "the single-machine edge uses nothing of gateway/cluster/ or gateway/tools/";
  // Both APIs' JSON is pure: sockets, the pipeline and the routes are serving/'s.
  if (starts_with(file, "gateway/anthropic/") && starts_with(target, "gateway/") &&
      !under(target, {"gateway/anthropic/", "gateway/openai/", "gateway/json/"}))
    return "gateway/anthropic/ is pure JSON over openai/'s chat machinery: it uses only itself, openai/ and json/";
  if (starts_with(file, "gateway/openai/") && starts_with(target, "gateway/anthropic/"))
    return "gateway/openai/ sits below gateway/anthropic/, which maps onto it";
  if (starts_with(file, "gateway/serving/") && starts_with(target, "gateway/admin/"))
    return "gateway/serving/ uses nothing of gateway/admin/ (cli/ mounts its routes)";
  if (starts_with(file, "gateway/client/") && !starts_with(target, "gateway/client/") && target != "base/error.h")
    return "gateway/client/ may use only base/error.h (nothing of the server)";
  if (starts_with(file, "gateway/cluster/wire/") && starts_with(target, "gateway/") &&
      !under(target, {"gateway/cluster/wire/", "gateway/json/"}))
    return "gateway/cluster/wire/ is what both ends share: it uses nothing else of gateway/ but gateway/json/";
  if (starts_with(file, "gateway/json/") && starts_with(target, "gateway/") && !starts_with(target, "gateway/json/"))
    return "gateway/json/ sits below openai/ and cluster/wire/: it uses nothing else of gateway/";
  if (starts_with(file, "gateway/template/") && starts_with(target, "gateway/") &&
      !starts_with(target, "gateway/template/"))
    return "gateway/template/ (the Jinja interpreter) uses nothing else of gateway/";
  if (starts_with(file, "gateway/cluster/route/") && !starts_with(target, "gateway/cluster/route/") &&
      !under(target, {"cache/", "policies/"}))
    return "gateway/cluster/route/ may use only cache/ and policies/";
  if (starts_with(file, "gateway/cluster/replica/") && starts_with(target, "gateway/cluster/front/"))
    return "a replica and its front meet only in gateway/cluster/wire/";
  if (starts_with(file, "gateway/cluster/front/") && starts_with(target, "gateway/cluster/replica/"))
    return "a replica and its front meet only in gateway/cluster/wire/";
  if (starts_with(file, "gateway/tools/") &&
      !under(target, {"gateway/tools/", "gateway/client/", "gateway/cluster/route/", "cache/", "policies/"}) &&
      target != "base/error.h")
    return "gateway/tools/ uses nothing of the server: only gateway/tools/, gateway/client/, "
           "gateway/cluster/route/, cache/, policies/ and base/error.h";
  return std::nullopt;
}

// Why `file` may not include `target` (both relative to the source root),
// or nothing when it may.
std::optional<std::string> why_forbidden(const std::string& file, const std::string& target) {
  const std::string from = module_of(file);
  const std::string to = module_of(target);
  auto in = [&](std::initializer_list<const char*> allowed) {
    return std::any_of(allowed.begin(), allowed.end(), [&](const char* m) { return to == m; });
  };
  if (to == "tests") return "no module includes tests/";
  if (from == "base" && to != "base") return "base/ uses nothing of ours";
  if (to == "base") return std::nullopt;  // every module may use base/
  if (from == "policies" && !in({"policies"})) return "policies/ uses nothing of ours";
  if (from == "cache" && !in({"cache", "policies"})) return "cache/ may use only policies/";
  if (from == "tenancy" && !in({"tenancy"})) return "tenancy/ uses nothing of ours";
  if (from == "ops" && !in({"ops"})) return "ops/ (kvgatectl) is a client of the HTTP API: it uses nothing of ours";
  if (from == "engine" && !in({"engine", "cache", "policies"})) return "engine/ may use only cache/ and policies/";
  if (from == "kernels" && !in({"kernels"}) && !kSeamHeaders.count(target) && target != "cache/ids.h")
    return "kernels/ may see only the Backend seam headers and cache/ids.h";
  if (from == "gateway") {
    if (const auto why = why_forbidden_in_gateway(file, target)) return why;
  }
  if (from != "engine") return std::nullopt;

  if (kSeamHeaders.count(file)) {
    if (kSeamHeaders.count(target) || target == "cache/ids.h" || target == "cache/hash128.h") return std::nullopt;
    return "the Backend seam headers include only each other, cache/ids.h and cache/hash128.h";
  }
  struct Rule {
    const char* sub;
    std::vector<const char*> banned;
  };
  static const std::vector<Rule> kEngineRules = {
      {"engine/model/", {"engine/sched/", "engine/cpu/", "engine/text/", "engine/tokenizer/"}},
      {"engine/tokenizer/", {"engine/sched/", "engine/cpu/", "engine/text/", "engine/sampling/"}},
      {"engine/cpu/", {"engine/sched/", "engine/tokenizer/", "engine/text/", "engine/sampling/"}},
      {"engine/sampling/", {"engine/sched/", "engine/tokenizer/", "engine/text/", "engine/model/"}},
      {"engine/text/", {"engine/sched/", "engine/cpu/", "engine/sampling/"}},
  };
  if (starts_with(file, "engine/grammar/") && !starts_with(target, "engine/grammar/") && target != "cache/ids.h")
    return "engine/grammar/ may use only base/ and cache/ids.h";
  for (const Rule& rule : kEngineRules) {
    if (!starts_with(file, rule.sub)) continue;
    for (const char* banned : rule.banned)
      if (starts_with(target, banned)) return std::string(rule.sub) + " may not use " + banned;
  }
  if (starts_with(file, "engine/sampling/") && starts_with(target, "engine/cpu/") &&
      target != "engine/cpu/vec_math.h")
    return "engine/sampling/ may use only engine/cpu/vec_math.h of engine/cpu/";
  return std::nullopt;
}

struct Include {
  int line;
  std::string spelled;  // as written between the quotes (or brackets)
};

// Every `#include "..."` of a source text, and every `#include <module/...>`
// that names one of ours, so angle brackets are no way around the rules.
std::vector<Include> includes_of(const std::string& text) {
  static const std::regex quoted(R"(^\s*#\s*include\s*"([^"]+)\")");
  static const std::regex angled(R"(^\s*#\s*include\s*<((base|cache|policies|tenancy|engine|kernels|gateway|tests)/[^>]+)>)");
  std::vector<Include> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (std::regex_search(line, m, quoted) || std::regex_search(line, m, angled)) out.push_back({n, m[1]});
  }
  return out;
}

// The path an include names, relative to the source root: beside the
// including file first (as the preprocessor looks for quoted includes),
// then from the root. Nothing for a header that is not ours.
std::optional<std::string> resolve(const fs::path& root, const std::string& file, const std::string& spelled) {
  const fs::path beside = (fs::path(file).parent_path() / spelled).lexically_normal();
  if (fs::exists(root / beside)) return beside.generic_string();
  const fs::path from_root = fs::path(spelled).lexically_normal();
  if (fs::exists(root / from_root)) return from_root.generic_string();
  const std::string first = module_of(from_root.generic_string());
  if (first == "tests" || std::find(kModules.begin(), kModules.end(), first) != kModules.end())
    return from_root.generic_string();  // ours, though missing: still held to the rules
  return std::nullopt;
}

// One line per forbidden include in `file`'s text: "file:line: includes X (why)".
std::vector<std::string> check_file(const fs::path& root, const std::string& file, const std::string& text) {
  std::vector<std::string> out;
  for (const Include& inc : includes_of(text)) {
    const auto target = resolve(root, file, inc.spelled);
    if (!target) continue;
    std::optional<std::string> why;
    if (starts_with(*target, "../")) why = "outside the source tree";
    else why = why_forbidden(file, *target);
    if (why) out.push_back(file + ":" + std::to_string(inc.line) + ": includes " + *target + " (" + *why + ")");
  }
  return out;
}

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExt = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"};
  return kExt.count(p.extension().string()) > 0;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TreeReport {
  std::vector<std::string> files;       // every source file checked
  std::vector<std::string> violations;  // every forbidden include
};

TreeReport check_tree(const fs::path& root) {
  TreeReport r;
  for (const std::string& module : kModules) {
    if (!fs::is_directory(root / module)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / module)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const std::string file = entry.path().lexically_relative(root).generic_string();
      r.files.push_back(file);
      for (std::string& v : check_file(root, file, read_all(entry.path()))) r.violations.push_back(std::move(v));
    }
  }
  std::sort(r.files.begin(), r.files.end());
  std::sort(r.violations.begin(), r.violations.end());
  return r;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s;
}

const fs::path kRoot = KVGATE_SOURCE_DIR;

TEST(IncludeRules, EveryModuleIncludesOnlyWhatTheDesignTableAllows) {
  const TreeReport r = check_tree(kRoot);
  // A wrong root would check nothing and pass: make sure the tree was seen.
  ASSERT_TRUE(std::binary_search(r.files.begin(), r.files.end(), "engine/sched/scheduler.cpp"))
      << "the source tree was not found at " << kRoot;
  ASSERT_TRUE(std::binary_search(r.files.begin(), r.files.end(), "cache/block_pool.h"));
  EXPECT_TRUE(r.violations.empty()) << r.violations.size() << " forbidden includes:\n" << joined(r.violations);
}

// The checker itself, on synthetic files: each forbidden include is reported,
// each allowed one is not, so the tree test above can fail.
TEST(IncludeRules, TheCheckerReportsAForbiddenInclude) {
  const auto v = check_file(kRoot, "cache/x.h", "#pragma once\n#include \"engine/request.h\"\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("cache/x.h:2: includes engine/request.h"), std::string::npos) << v[0];
}

TEST(IncludeRules, TheCheckerFollowsEveryRowOfTheTable) {
  struct Case {
    const char* file;
    const char* target;
    bool allowed;
  };
  const Case cases[] = {
      {"policies/eviction/x.h", "policies/ids.h", true},
      {"policies/eviction/x.h", "cache/ids.h", false},
      {"cache/x.cpp", "policies/eviction/eviction_policy.h", true},
      {"cache/x.cpp", "tenancy/tenant.h", false},
      {"tenancy/x.cpp", "tenancy/ledger.h", true},
      {"tenancy/x.cpp", "cache/ids.h", false},
      {"tenancy/x.cpp", "engine/request.h", false},
      {"ops/kvgatectl/x.cpp", "ops/kvgatectl/output.h", true},
      {"ops/kvgatectl/x.cpp", "gateway/openai/api_error.h", false},
      {"engine/sched/x.cpp", "cache/block_pool.h", true},
      {"engine/sched/x.cpp", "engine/cpu/cpu_backend.h", true},
      {"engine/request.h", "cache/block_hash.h", true},
      {"engine/x.cpp", "tenancy/usage.h", false},
      {"engine/x.cpp", "gateway/cli/commands.h", false},
      {"kernels/x.cu", "engine/backend.h", true},
      {"kernels/x.cu", "engine/kv_layout.h", true},
      {"kernels/x.cu", "cache/ids.h", true},
      {"kernels/x.cu", "kernels/norm.cuh", true},
      {"kernels/x.cu", "cache/block_pool.h", false},
      {"kernels/x.cu", "engine/cpu/kv_pool.h", false},
      {"kernels/x.cu", "engine/request.h", false},
      {"gateway/cli/x.cpp", "tenancy/tenancy.h", true},
      {"gateway/cli/x.cpp", "engine/sched/engine.h", true},
      {"gateway/x.cpp", "tests/shared_data.h", false},
      {"gateway/cluster/route/x.cpp", "cache/hash128.h", true},
      {"gateway/cluster/route/x.cpp", "policies/eviction/eviction_policy.h", true},
      {"gateway/cluster/route/x.cpp", "gateway/cluster/route/replica_index.h", true},
      {"gateway/cluster/route/x.cpp", "gateway/cluster/front/replica_set.h", false},
      {"tenancy/x.cpp", "base/mutex.h", true},
      {"cache/tiers/x.cpp", "base/mutex.h", true},
      {"policies/x.cpp", "base/error.h", true},
      {"base/x.h", "engine/request.h", false},
      {"base/x.h", "base/error.h", true},
      {"gateway/cluster/route/x.cpp", "gateway/serving/pipeline.h", false},
      {"gateway/cluster/route/x.cpp", "gateway/cluster/wire/event_wire.h", false},
      {"gateway/cluster/wire/x.cpp", "engine/request.h", true},
      {"gateway/cluster/wire/x.cpp", "gateway/cluster/wire/event_wire.h", true},
      {"gateway/cluster/wire/x.cpp", "gateway/serving/pipeline.h", false},
      {"gateway/cluster/wire/x.cpp", "gateway/cluster/route/replica_index.h", false},
      {"gateway/cluster/wire/x.cpp", "gateway/json/field_reader.h", true},
      {"gateway/cluster/wire/x.cpp", "gateway/openai/json_fields.h", false},
      {"gateway/openai/x.cpp", "gateway/json/field_reader.h", true},
      {"gateway/openai/x.cpp", "gateway/anthropic/api_error.h", false},
      {"gateway/anthropic/x.cpp", "gateway/openai/chat_tools.h", true},
      {"gateway/anthropic/x.cpp", "gateway/anthropic/api_error.h", true},
      {"gateway/anthropic/x.cpp", "engine/finish_reason.h", true},
      {"gateway/anthropic/x.cpp", "gateway/serving/pipeline.h", false},
      {"gateway/anthropic/x.cpp", "gateway/server/reply.h", false},
      {"gateway/anthropic/x.cpp", "gateway/cluster/wire/replica_wire.h", false},
      {"gateway/serving/x.cpp", "gateway/anthropic/stream_events.h", true},
      {"gateway/json/x.cpp", "gateway/openai/api_error.h", false},
      {"gateway/json/x.cpp", "gateway/cluster/wire/replica_wire.h", false},
      {"gateway/json/x.cpp", "gateway/json/field_reader.h", true},
      {"gateway/cluster/replica/x.cpp", "gateway/cluster/wire/replica_wire.h", true},
      {"gateway/cluster/replica/x.cpp", "gateway/serving/pipeline.h", true},
      {"gateway/cluster/replica/x.cpp", "gateway/cluster/front/replica_set.h", false},
      {"gateway/cluster/front/x.cpp", "gateway/cluster/wire/replica_wire.h", true},
      {"gateway/cluster/front/x.cpp", "gateway/client/http_exchange.h", true},
      {"gateway/cluster/front/x.cpp", "gateway/cluster/replica/internal_api.h", false},
      {"gateway/serving/x.cpp", "gateway/cluster/replica/internal_api.h", false},
      {"gateway/serving/x.cpp", "gateway/admin/admin_api.h", false},
      {"gateway/serving/x.cpp", "gateway/tools/sim/replay.h", false},
      {"gateway/server/x.cpp", "gateway/cli/commands.h", false},
      {"gateway/admin/x.cpp", "gateway/serving/pipeline.h", true},
      {"gateway/admin/x.cpp", "gateway/cluster/wire/replica_wire.h", false},
      {"gateway/cli/x.cpp", "gateway/cluster/front/replica_set.h", true},
      {"gateway/main.cpp", "gateway/cli/commands.h", true},
      {"gateway/tools/sim/x.cpp", "gateway/cluster/route/replica_index.h", true},
      {"gateway/tools/sim/x.cpp", "gateway/tools/trace/trace_reader.h", true},
      {"gateway/tools/sim/x.cpp", "gateway/cluster/wire/event_wire.h", false},
      {"gateway/tools/sim/x.cpp", "engine/sched/engine.h", false},
      {"gateway/client/x.cpp", "gateway/client/https_target.h", true},
      {"gateway/client/x.cpp", "base/error.h", true},
      {"gateway/client/x.cpp", "gateway/server/reply.h", false},
      {"gateway/client/x.cpp", "gateway/tools/loadgen/workload.h", false},
      {"gateway/client/x.cpp", "cache/ids.h", false},
      {"gateway/tools/loadgen/x.cpp", "gateway/client/http_exchange.h", true},
      {"gateway/tools/loadgen/x.cpp", "gateway/tools/loadgen/workload.h", true},
      {"gateway/tools/loadgen/x.cpp", "cache/ids.h", true},
      {"gateway/tools/loadgen/x.cpp", "base/error.h", true},
      {"gateway/tools/loadgen/x.cpp", "gateway/server/server.h", false},
      {"gateway/tools/loadgen/x.cpp", "gateway/serving/pipeline.h", false},
      {"gateway/tools/loadgen/x.cpp", "engine/sched/engine.h", false},
      {"gateway/tools/trace/x.cpp", "tenancy/usage.h", false},
      {"engine/x.cpp", "tests/shared_data.h", false},
      {"engine/backend.h", "engine/batch.h", true},
      {"engine/batch.h", "cache/ids.h", true},
      {"engine/model_config.h", "cache/hash128.h", true},
      {"engine/backend.h", "cache/block_pool.h", false},
      {"engine/backend.h", "engine/model/tensor_type.h", false},
      {"engine/model/x.h", "engine/backend.h", true},
      {"engine/model/x.h", "engine/sched/engine.h", false},
      {"engine/model/x.h", "engine/cpu/kv_pool.h", false},
      {"engine/model/x.h", "engine/text/stop_strings.h", false},
      {"engine/model/x.h", "engine/tokenizer/vocab.h", false},
      {"engine/tokenizer/x.h", "engine/model/gguf.h", true},
      {"engine/tokenizer/x.h", "engine/text/text_stream.h", false},
      {"engine/tokenizer/x.h", "engine/sampling/sampler.h", false},
      {"engine/cpu/x.h", "engine/model/model.h", true},
      {"engine/cpu/x.h", "engine/tokenizer/vocab.h", false},
      {"engine/cpu/x.h", "engine/sampling/sampler.h", false},
      {"engine/sampling/x.cpp", "engine/cpu/vec_math.h", true},
      {"engine/sampling/x.cpp", "engine/cpu/matmul.h", false},
      {"engine/sampling/x.cpp", "engine/model/model.h", false},
      {"engine/sampling/x.cpp", "engine/sched/scheduler.h", false},
      {"engine/text/x.cpp", "engine/tokenizer/tokenizer.h", true},
      {"engine/text/x.cpp", "engine/sampling/sampler.h", false},
      {"engine/text/x.cpp", "engine/cpu/vec_math.h", false},
      {"engine/grammar/x.cpp", "cache/ids.h", true},
      {"engine/grammar/x.cpp", "base/mutex.h", true},
      {"engine/grammar/x.cpp", "engine/grammar/matcher.h", true},
      {"engine/grammar/x.cpp", "engine/tokenizer/vocab.h", false},
      {"engine/grammar/x.cpp", "engine/sched/engine.h", false},
      {"engine/grammar/x.cpp", "cache/block_pool.h", false},
  };
  for (const Case& c : cases) {
    const auto why = why_forbidden(c.file, c.target);
    EXPECT_EQ(!why.has_value(), c.allowed) << c.file << " including " << c.target << ": " << why.value_or("allowed");
  }
}

TEST(IncludeRules, IncludesAreReadAsThePreprocessorReadsThem) {
  const std::string text =
      "#include \"engine/request.h\"\n"
      "  #  include   \"cache/ids.h\"  // spaced\n"
      "#include <vector>\n"
      "#include <tenancy/usage.h>\n"
      "// #include \"commented/out.h\" is not at the start of a line\n";
  const auto incs = includes_of(text);
  ASSERT_EQ(incs.size(), 3u);
  EXPECT_EQ(incs[0].spelled, "engine/request.h");
  EXPECT_EQ(incs[1].spelled, "cache/ids.h");
  EXPECT_EQ(incs[1].line, 2);
  EXPECT_EQ(incs[2].spelled, "tenancy/usage.h");
}

TEST(IncludeRules, AnIncludeResolvesBesideItsFileFirstThenFromTheRoot) {
  const fs::path root = fs::temp_directory_path() / ("kvgate_include_rules_" + std::to_string(::getpid()));
  fs::create_directories(root / "engine/cpu");
  fs::create_directories(root / "tenancy");
  std::ofstream(root / "engine/cpu/dot.h") << "#pragma once\n";
  std::ofstream(root / "tenancy/usage.h") << "#pragma once\n";
  EXPECT_EQ(resolve(root, "engine/cpu/matmul.cpp", "dot.h"), "engine/cpu/dot.h");
  EXPECT_EQ(resolve(root, "engine/cpu/matmul.cpp", "tenancy/usage.h"), "tenancy/usage.h");
  EXPECT_EQ(resolve(root, "engine/cpu/matmul.cpp", "xxhash.h"), std::nullopt);  // not ours
  // A path that climbs out of engine/ is still held to engine/'s rules, and
  // a missing header of ours is checked all the same.
  auto v = check_file(root, "engine/cpu/x.cpp", "#include \"../../tenancy/usage.h\"\n");
  ASSERT_EQ(v.size(), 1u) << joined(v);
  EXPECT_NE(v[0].find("includes tenancy/usage.h"), std::string::npos) << v[0];
  v = check_file(root, "engine/cpu/x.cpp", "#include \"tenancy/not_yet_written.h\"\n");
  EXPECT_EQ(v.size(), 1u) << joined(v);
  fs::remove_all(root);
}

}  // namespace
}  // namespace kvgate
