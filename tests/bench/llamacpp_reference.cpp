#include "tests/bench/llamacpp_reference.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "base/error.h"

namespace kvgate {
namespace {

// Runs a shell command and returns its stdout's lines that are JSON
// objects (both tools print one per result with -o jsonl).
std::vector<boost::json::object> json_lines(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) throw Error("cannot run: " + cmd);
  std::vector<boost::json::object> out;
  std::string line;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (line.empty() || line.back() != '\n') continue;
    if (line.front() == '{') {
      boost::system::error_code ec;
      boost::json::value v = boost::json::parse(line, ec);
      if (!ec && v.is_object()) out.push_back(v.as_object());
    }
    line.clear();
  }
  const int status = pclose(p);
  if (status != 0 || out.empty()) throw Error("llama.cpp reference failed (status " + std::to_string(status) + "): " + cmd);
  return out;
}

double number(const boost::json::object& o, const char* key) {
  const boost::json::value* v = o.if_contains(key);
  if (!v || !v->is_number()) throw Error(std::string("llama.cpp output has no number '") + key + "'");
  return v->to_number<double>();
}

}  // namespace

LlamaCppReference::LlamaCppReference(std::string bin, int threads) : bin_(std::move(bin)), threads_(threads) {}

std::optional<LlamaCppReference> LlamaCppReference::from_env(int threads) {
  const char* bin = std::getenv("KVGATE_LLAMACPP_BIN");
  if (!bin || !*bin) return std::nullopt;
  for (const char* tool : {"llama-bench", "llama-batched-bench"})
    if (!std::filesystem::exists(std::filesystem::path(bin) / tool))
      throw Error(std::string("KVGATE_LLAMACPP_BIN=") + bin + " has no " + tool +
                  " (build it with ../shared/tools/build-llamacpp.sh)");
  LlamaCppReference ref(bin, threads);
  // The tools load their ggml libraries from beside them.
  setenv("LD_LIBRARY_PATH", bin, 1);
  return ref;
}

std::string LlamaCppReference::instruction_set() const {
  // bin_ is the build's bin/: its CMakeCache.txt is one level up.
  std::ifstream cache(std::filesystem::path(bin_) / ".." / "CMakeCache.txt");
  std::map<std::string, std::string> flags;
  for (std::string line; std::getline(cache, line);)
    for (const char* key : {"GGML_NATIVE", "GGML_AVX512", "GGML_AVX2", "GGML_AVX"})
      if (line.starts_with(std::string(key) + ":")) flags[key] = line.substr(line.find('=') + 1);
  if (flags.empty()) return "unknown (no CMakeCache.txt beside its bin/)";
  if (flags["GGML_NATIVE"] == "ON")
    return std::string("native (-march=native: ") + (__builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2") +
           " on this CPU)";
  const std::string isa = flags["GGML_AVX512"] == "ON" ? "AVX-512" : flags["GGML_AVX2"] == "ON" ? "AVX2" : "AVX or less";
  return isa + " (GGML_NATIVE=OFF, GGML_AVX512=" + flags["GGML_AVX512"] + ", GGML_AVX2=" + flags["GGML_AVX2"] + ")";
}

double LlamaCppReference::prefill_tokens_per_s(const std::string& gguf, int n, int reps) const {
  const auto rows = json_lines("'" + bin_ + "/llama-bench' -m '" + gguf + "' -t " + std::to_string(threads_) +
                               " -p " + std::to_string(n) + " -n 0 -r " + std::to_string(reps) + " -o jsonl");
  const boost::json::object& r = rows.front();
  if (const auto* commit = r.if_contains("build_commit"); commit && commit->is_string())
    version_ = std::string(commit->as_string()) + " (build " + std::to_string(static_cast<long long>(number(r, "build_number"))) + ")";
  double best = 0;
  for (const boost::json::value& ts : r.at("samples_ts").as_array()) best = std::max(best, ts.to_number<double>());
  return best;
}

double LlamaCppReference::decode_tokens_per_s(const std::string& gguf, int batch, int prompt, int gen, int reps) const {
  const int ctx = batch * (prompt + gen) + 256;
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto rows = json_lines("'" + bin_ + "/llama-batched-bench' -m '" + gguf + "' -t " + std::to_string(threads_) +
                                 " -c " + std::to_string(ctx) + " -npp " + std::to_string(prompt) + " -ntg " +
                                 std::to_string(gen) + " -npl " + std::to_string(batch) + " --output-format jsonl");
    best = std::max(best, number(rows.front(), "speed_tg"));
  }
  return best;
}

}  // namespace kvgate
