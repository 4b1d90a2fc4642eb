// The kvgate binary as a user runs it: real processes, real files, exit codes.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "tests/shared_data.h"
#include "tests/temp_dir.h"

namespace kvgate {
namespace {

using kvgate::testing::read_file;
using kvgate::testing::shared_path;
namespace fs = std::filesystem;

struct CliRun {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// `command` run by the shell (stdout and stderr together).
CliRun shell(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

CliRun kvgate(const std::string& args) { return shell(std::string(KVGATE_BINARY) + " " + args); }

using kvgate::testing::TempDir;

const std::string kStories = shared_path("models/stories260K.gguf");

TEST(Cli, GreedyGenerationReproducesThePublishedStory) {
  CliRun r = kvgate("generate --model " + kStories + " --temperature 0 --max-tokens 200");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::string expected = read_file(shared_path("models/stories260K.greedy200.expected.txt"));
  EXPECT_EQ(r.out.substr(0, expected.size()), expected);
}

TEST(Cli, ContinuationKeepsTheSpaceBeforeItsFirstWord) {
  // Greedy from BOS gives "Once upon a time, there was ..."; from the prompt
  // "Once upon a time," the continuation must start with its space.
  CliRun r = kvgate("generate --model " + kStories + " --prompt 'Once upon a time,' --temperature 0 --max-tokens 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"text\":\" there was"), std::string::npos) << r.out;
}

TEST(Cli, GenerateJsonHasIdsTextAndTimings) {
  CliRun r = kvgate("generate --model " + kStories + " --prompt 'Once upon a time' --temperature 0 --max-tokens 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* key : {"\"prompt_ids\":[1,", "\"output_ids\":[", "\"text\":", "\"ttft_ms\":", "\"tpot_ms\":",
                          "\"finish_reason\":\"length\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
}

TEST(Cli, SameSeedSameOutput) {
  const std::string args = "generate --model " + kStories + " --temperature 1 --top-p 0.9 --seed 42 --max-tokens 40 --json";
  CliRun a = kvgate(args), b = kvgate(args);
  ASSERT_EQ(a.exit_code, 0);
  auto ids = [](const std::string& s) { return s.substr(s.find("output_ids"), s.find("\"text\"") - s.find("output_ids")); };
  EXPECT_EQ(ids(a.out), ids(b.out));
}

TEST(Cli, StopStringEndsGenerationAndIsNotPrinted) {
  CliRun r = kvgate("generate --model " + kStories + " --temperature 0 --max-tokens 200 --stop Lily --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"text\":\"Once upon a time, there was a little girl named \""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"finish_reason\":\"stop\""), std::string::npos);
}

TEST(Cli, TokenizeMatchesTheVocabulary) {
  CliRun r = kvgate("tokenize --model " + shared_path("testdata/ggml-vocab-llama-spm.gguf") + " --text 'Hello world' --no-bos");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "15043 3186\n");
}

TEST(Cli, InfoReportsKvBytesAndCapacity) {
  CliRun r = kvgate("info --model " + kStories + " --kv-budget 1MiB --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 2 x 5 layers x 4 KV heads x 8 head dim x 4 bytes = 1280 B per token.
  EXPECT_NE(r.out.find("\"kv_bytes_per_token\":1280"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kv_tokens\":816"), std::string::npos) << r.out;  // 51 blocks of 16
  EXPECT_NE(r.out.find("\"parameters\":292800"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"full_context_sequences\":0"), std::string::npos) << r.out;
}

TEST(Cli, InfoReportsCapacityForTheChosenKvType) {
  CliRun r = kvgate("info --model " + kStories + " --kv-budget 1MiB --kv-type f16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // 2 bytes per element: 640 B per token, and 1MiB holds 102 blocks of 16 (twice f32's 51).
  EXPECT_NE(r.out.find("\"kv_type\":\"f16\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kv_bytes_per_token\":640"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kv_tokens\":1632"), std::string::npos) << r.out;
  EXPECT_NE(kvgate("info --model " + kStories + " --kv-type f8").exit_code, 0);
}

// stories260K's greedy output does not change with half-precision K/V (the
// engine test Stories260KGreedyMatchesPublishedIdsAndF32Logits says by how
// little its logits move).
TEST(Cli, GenerateWithHalfKvTypesGivesTheSameGreedyText) {
  const std::string args = "generate --model " + kStories + " --backend cpu --temperature 0 --max-tokens 100 --json";
  CliRun f32 = kvgate(args);
  ASSERT_EQ(f32.exit_code, 0) << f32.out;
  auto ids = [](const std::string& s) { return s.substr(s.find("output_ids"), s.find("\"text\"") - s.find("output_ids")); };
  for (const char* type : {"f16", "bf16"}) {
    CliRun half = kvgate(args + " --kv-type " + type);
    ASSERT_EQ(half.exit_code, 0) << half.out;
    EXPECT_EQ(ids(half.out), ids(f32.out)) << type;
  }
}

TEST(Cli, MkmodelWritesAModelThatGenerates) {
  TempDir dir;
  const std::string out = dir.sub("tiny.gguf");
  CliRun mk = kvgate("mkmodel --out " + out + " --vocab-from " + shared_path("testdata/ggml-vocab-llama-spm.gguf") +
                  " --layers 2 --dim 64 --heads 4 --kv-heads 2 --ffn 128 --type q8_0 --context 256");
  ASSERT_EQ(mk.exit_code, 0) << mk.out;
  CliRun info = kvgate("info --model " + out + " --json");
  EXPECT_NE(info.out.find("\"kv_heads\":2"), std::string::npos) << info.out;
  CliRun gen = kvgate("generate --model " + out + " --prompt hi --max-tokens 4 --temperature 0 --json");
  EXPECT_EQ(gen.exit_code, 0) << gen.out;
}

TEST(Cli, VersionNamesTheGitRevision) {
  CliRun r = kvgate("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("kvgate git "), std::string::npos) << r.out;
}

// A word that names no command is an error naming it, --help or not (it was
// the root help and exit 0).
TEST(Cli, AnUnknownCommandIsAnErrorEvenWithHelp) {
  for (const char* args : {"frobnicate --help", "frobnicate"}) {
    CliRun r = kvgate(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.out.find("unknown command 'frobnicate'"), std::string::npos) << r.out;
  }
  EXPECT_EQ(kvgate("info --help").exit_code, 0);
}

// Each server command lists and takes its own flags: a route front runs no
// engine, so the engine's flags (KV budget, CUDA graphs, the KV tiers) are
// not in its --help and are unknown options there; `serve` keeps them.
TEST(Cli, RouteHasNoEngineFlags) {
  const std::string engine_flags[] = {"--kv-budget", "--cuda-graphs", "--gpu-memory-percent", "--kv-host-bytes",
                                      "--kv-host-policy", "--kv-disk-bytes", "--max-running", "--block-events"};
  // "  --kv-budget BYTES=...", "  --cuda-graphs,--no-cuda-graphs{false}=true"
  const auto lists = [](const std::string& help, const std::string& flag) {
    return help.find("  " + flag + " ") != std::string::npos || help.find("  " + flag + ",") != std::string::npos;
  };
  const CliRun route = kvgate("route --help");
  ASSERT_EQ(route.exit_code, 0) << route.out;
  for (const std::string& flag : engine_flags) EXPECT_FALSE(lists(route.out, flag)) << flag;
  EXPECT_TRUE(lists(route.out, "--router")) << route.out;
  EXPECT_TRUE(lists(route.out, "--block-size")) << route.out;
  const CliRun serve = kvgate("serve --help");
  ASSERT_EQ(serve.exit_code, 0) << serve.out;
  for (const std::string& flag : engine_flags) EXPECT_TRUE(lists(serve.out, flag)) << flag;
  EXPECT_FALSE(lists(serve.out, "--router")) << serve.out;
  const CliRun refused = kvgate("route --kv-budget 1G");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.out.find("not expected"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--kv-budget"), std::string::npos) << refused.out;
}

// The mixture people download, from kvgate's own quantizer: llama-quantize's
// types per tensor, reported by `info`, and a model that generates.
TEST(Cli, MkmodelWritesAQ4_K_MModelThatInfoDescribes) {
  TempDir dir;
  const std::string out = dir.sub("q4km.gguf");
  CliRun mk = kvgate("mkmodel --out " + out + " --vocab-from " + shared_path("testdata/ggml-vocab-llama-spm.gguf") +
                     " --layers 2 --dim 256 --heads 4 --kv-heads 2 --ffn 512 --type q4_k_m --context 256");
  ASSERT_EQ(mk.exit_code, 0) << mk.out;
  CliRun info = kvgate("info --model " + out + " --json");
  const auto j = boost::json::parse(info.out).as_object();
  EXPECT_EQ(j.at("weight_type").as_string(), "Q4_K_M");
  const auto& types = j.at("weight_types").as_object();
  EXPECT_EQ(types.at("Q6_K").at("tensors").to_number<int64_t>(), 3);  // output, layer 1's attn_v and ffn_down
  EXPECT_EQ(types.at("Q4_K").at("tensors").to_number<int64_t>(), 13);
  EXPECT_NE(kvgate("info --model " + out).out.find("weights          Q4_K_M, "), std::string::npos);
  CliRun gen = kvgate("generate --model " + out + " --prompt hi --max-tokens 4 --temperature 0 --json");
  EXPECT_EQ(gen.exit_code, 0) << gen.out;
  CliRun bad = kvgate("mkmodel --out " + out + " --vocab-from x --layers 1 --dim 64 --heads 1 --ffn 64 --type q3_k");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("unknown type q3_k"), std::string::npos) << bad.out;
}

// A sanitizer build's resident memory is mostly its shadow, not kvgate's.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KVGATE_CLI_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KVGATE_CLI_SANITIZED 1
#endif
#endif

// `kvgate serve ARGS` in a process of its own until it says it is listening
// (or ends): the lines it printed, and its resident memory at that moment.
// The server is then stopped with SIGTERM.
struct StartedServer {
  std::vector<std::string> lines;
  int64_t rss_kib = -1;  // VmRSS once it listens; -1 when it never did
  bool has(const std::string& text) const {
    for (const std::string& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  std::string all() const {
    std::string out;
    for (const std::string& l : lines) out.append(l).append("\n");
    return out;
  }
};

StartedServer start_serve(const std::string& args) {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  const std::string command = std::string("exec " KVGATE_BINARY " serve ") + args;
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, "/bin/sh", &fa, nullptr, const_cast<char* const*>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  StartedServer s;
  FILE* f = fdopen(out[0], "r");
  char* line = nullptr;
  size_t cap = 0;
  for (ssize_t n; (n = getline(&line, &cap, f)) > 0;) {
    s.lines.emplace_back(line, static_cast<size_t>(line[n - 1] == '\n' ? n - 1 : n));
    if (s.lines.back().find(" listening on ") == std::string::npos) continue;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string key; status >> key;)
      if (key == "VmRSS:" && status >> s.rss_kib) break;
    kill(pid, SIGTERM);
  }
  free(line);
  fclose(f);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  return s;
}

// The embedded default sizes its KV cache from the model and the machine
// and says so: stories260K's 2048-token context x 256 running sequences is
// 640 MiB of f32 K/V (less only where 10% of the available memory is less),
// and the concurrency is the smaller of max_running's 256 and what the KV
// cache holds, not the 409.59x a fixed 1 GiB budget promised. Nothing of
// the pool is resident until written: the server listens in well under
// 300 MB (it held 1.2 GB). --backend cpu, so a GPU's runtime on the machine
// is not counted; sanitizer builds keep shadow memory, so they check the
// lines only.
TEST(Cli, ServeSizesItsDefaultsFromTheModelAndSaysWhy) {
  TempDir dir;
  const StartedServer s = start_serve("--model " + kStories + " --backend cpu --listen 127.0.0.1:0 --data-dir " +
                                      dir.sub("data"));
  ASSERT_GE(s.rss_kib, 0) << s.all();
  const bool fits = s.has("kvgate: KV budget 640.0 MiB (auto: 2048-token context x 256 running; 10% of ");
  EXPECT_TRUE(fits || s.has("available memory; 2048-token context x 256 running would need 640.0 MiB)")) << s.all();
  EXPECT_TRUE(fits ? s.has("KV cache 524288 tokens (32768 blocks of 16, f32, 640.0 MiB of host memory), maximum "
                           "concurrency 256x for 2048-token requests (max_running; the KV cache alone would hold 256.00x)")
                   : s.has("x for 2048-token requests (the KV cache; max_running would allow 256)"))
      << s.all();
  EXPECT_TRUE(s.has("KV host tier: ") && s.has("; auto: 10% of ") && s.has(" available memory), policy lru"))
      << s.all();
  EXPECT_TRUE(s.has("KV disk tier: ") && s.has("free for " + dir.sub("data") + "/kv), policy lru")) << s.all();
#ifndef KVGATE_CLI_SANITIZED
  EXPECT_LT(s.rss_kib, 300 * 1024) << s.all();
#endif
}

// The data directory holds the bill, the tiers' prompts and the TLS key:
// the server's alone. One left open to others is narrowed and said to be;
// what the server writes there is its owner's only (but the certificate).
TEST(Cli, TheDataDirectoryIsTheServersAlone) {
  namespace fs = std::filesystem;
  TempDir dir;
  const fs::path data = dir.sub("data");
  fs::create_directories(data);
  fs::permissions(data, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec, fs::perm_options::replace);
  const StartedServer s = start_serve("--model " + kStories + " --backend cpu --listen 127.0.0.1:0 --kv-host-bytes 0 "
                                      "--kv-disk-bytes 0 --data-dir " + data.string());
  EXPECT_TRUE(s.has("data directory " + data.string() + " was mode 0755, open to other users: now 0700")) << s.all();
  EXPECT_EQ(fs::status(data).permissions(), fs::perms::owner_all);
  int files = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(data)) {
    if (e.path().extension() == ".crt") continue;  // a certificate is public
    EXPECT_EQ(e.status().permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none) << e.path();
    ++files;
  }
  EXPECT_GT(files, 3);  // the tenancy store and the TLS pair at least
}

// Sizes given are used exactly as given, and said to be.
TEST(Cli, ServeKeepsTheSizesItIsGiven) {
  TempDir dir;
  const StartedServer s = start_serve("--model " + kStories + " --backend cpu --listen 127.0.0.1:0 --data-dir " +
                                      dir.sub("data") + " --kv-budget 1GiB --kv-host-bytes 0 --kv-disk-bytes 64MiB");
  ASSERT_GE(s.rss_kib, 0) << s.all();
  EXPECT_TRUE(s.has("kvgate: KV budget 1.0 GiB (model.kv_budget)")) << s.all();
  EXPECT_TRUE(s.has("KV cache 838848 tokens (52428 blocks of 16, f32, 1024.0 MiB of host memory), maximum concurrency "
                    "256x for 2048-token requests (max_running; the KV cache alone would hold 409.59x)")) << s.all();
  EXPECT_FALSE(s.has("KV host tier")) << s.all();
  EXPECT_TRUE(s.has(" tokens, 64.0 MiB; kv_tiers.disk_bytes), policy lru")) << s.all();
}

// Bad input: a clear message naming the problem and a non-zero exit, never a crash.
class CliBadInput : public ::testing::Test {
 protected:
  static void expect_error(const std::string& args, const std::string& message) {
    CliRun r = kvgate(args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("kvgate: error:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << "wanted '" << message << "' in: " << r.out;
  }
  TempDir dir_;
};

// `kvgate serve` away from the repository root: the bundled model's error
// says where it looked and what to set.
TEST_F(CliBadInput, TheBundledModelMissingNamesKvgateSharedAndModel) {
  CliRun r = shell("cd " + dir_.path().string() + " && env -u KVGATE_SHARED " KVGATE_BINARY " serve --data-dir " +
                   dir_.sub("data") + " --listen 127.0.0.1:0");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("KVGATE_SHARED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--model FILE"), std::string::npos) << r.out;
}

// `kvgate cache purge` on a disk tier a server holds open: it says so and
// names the tool to use, instead of RocksDB's lock error alone.
TEST_F(CliBadInput, PurgingATierAServerHoldsNamesKvgatectl) {
  const std::string data = dir_.sub("data");
  std::filesystem::create_directories(data + "/kv");
  ASSERT_EQ(kvgate("cache purge --all --data-dir " + data).exit_code, 0);  // creates the database
  // RocksDB's lock, as a running server's process holds it.
  const int fd = ::open((data + "/kv/LOCK").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  struct flock lock{};
  lock.l_type = F_WRLCK, lock.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(fd, F_SETLK, &lock), 0);
  expect_error("cache purge --all --data-dir " + data, "a server is running on it; use `kvgatectl cache purge`");
  ::close(fd);
}

TEST_F(CliBadInput, MissingFile) {
  expect_error("generate --model /nonexistent/model.gguf", "/nonexistent/model.gguf: cannot open");
}

TEST_F(CliBadInput, WrongMagic) {
  const std::string path = dir_.sub("notgguf.gguf");
  std::ofstream(path) << "this is not a model file at all";
  expect_error("info --model " + path, "wrong magic");
}

TEST_F(CliBadInput, TruncatedData) {
  const std::string path = dir_.sub("truncated.gguf");
  std::string bytes = read_file(kStories);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_error("generate --model " + path, "truncated file");
}

TEST_F(CliBadInput, LegacyVersion1) {
  expect_error("info --model " + shared_path("testdata/tinyllamas-stories-260k-f32.gguf"), "version 1");
}

TEST_F(CliBadInput, InconsistentTensorShape) {
  // stories260K's metadata with one tensor of the wrong shape.
  auto src = GgufFile::open(kStories);
  GgufWriter w;
  for (const auto& [k, v] : src->metadata()) w.set(k, v);
  for (const GgufTensor& t : src->tensors()) {
    std::vector<int64_t> dims = t.dims;
    if (t.name == "blk.0.attn_k.weight") dims = {32, 64};  // transposed
    w.add_tensor(t.name, dims, t.type, std::vector<std::byte>(t.data, t.data + t.nbytes));
  }
  const std::string path = dir_.sub("badshape.gguf");
  w.write(path);
  expect_error("generate --model " + path, "'blk.0.attn_k.weight' has shape [32, 64], expected [64, 32]");
}

TEST_F(CliBadInput, UnsupportedArchitecture) {
  GgufWriter w;
  w.set_string("general.architecture", "mamba");
  const std::string path = dir_.sub("mamba.gguf");
  w.write(path);
  expect_error("info --model " + path, "unsupported architecture 'mamba'");
}

// A model kvgate cannot compute exactly (a tensor it does not compute, a
// RoPE scaling it does not do) is refused by name, by `generate` and by
// `serve` before it listens: never served approximately.
TEST_F(CliBadInput, AModelKvgateCannotComputeIsRefusedByGenerateAndServe) {
  struct Case {
    const char* name;
    std::function<void(GgufWriter&)> edit;
    const char* error;
  };
  const Case cases[] = {
      {"extra-tensor",
       [](GgufWriter& w) {
         w.add_tensor("blk.0.attn_output.bias", {64}, TensorType::F32, std::vector<std::byte>(64 * sizeof(float)));
       },
       "tensor 'blk.0.attn_output.bias' is not part of kvgate's llama model"},
      {"longrope", [](GgufWriter& w) { w.set_string("llama.rope.scaling.type", "longrope"); },
       "rope.scaling.type 'longrope' is not supported"},
  };
  auto src = GgufFile::open(kStories);
  for (const Case& c : cases) {
    GgufWriter w;
    for (const auto& [k, v] : src->metadata()) w.set(k, v);
    for (const GgufTensor& t : src->tensors())
      w.add_tensor(t.name, t.dims, t.type, std::vector<std::byte>(t.data, t.data + t.nbytes));
    c.edit(w);
    const std::string path = dir_.sub(std::string(c.name) + ".gguf");
    w.write(path);
    expect_error("generate --model " + path, c.error);
    expect_error("serve --model " + path + " --listen 127.0.0.1:0 --data-dir " + dir_.sub(std::string(c.name) + "-data"),
                 c.error);
  }
}

TEST_F(CliBadInput, UnsupportedTokenizer) {
  expect_error("tokenize --model " + shared_path("testdata/ggml-vocab-bert-bge.gguf") + " --text hi",
               "unsupported tokenizer");
}

TEST_F(CliBadInput, PromptLongerThanTheContext) {
  // stories260K's context is 2048 tokens; 3000 words are more.
  const std::string path = dir_.sub("long.txt");
  std::ofstream f(path);
  for (int i = 0; i < 3000; ++i) f << "girl ";
  f.close();
  expect_error("generate --model " + kStories + " --prompt \"$(cat " + path + ")\"", "context is 2048 tokens");
}

TEST_F(CliBadInput, BadSamplingParameters) {
  expect_error("generate --model " + kStories + " --top-p 1.5", "top_p");
  expect_error("generate --model " + kStories + " --temperature -1", "temperature");
}

TEST_F(CliBadInput, BadByteSize) {
  expect_error("info --model " + kStories + " --kv-budget lots", "'lots' is not a byte count");
}

}  // namespace
}  // namespace kvgate
