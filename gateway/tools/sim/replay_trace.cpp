#include "gateway/tools/sim/replay_trace.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "base/error.h"
#include "gateway/tools/trace/trace_reader.h"

namespace kvgate::sim {
namespace {

constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max() - 1;

std::string where(std::string_view source, int64_t line) { return std::string(source) + ":" + std::to_string(line) + ": "; }

// The trace's ids, numbered densely in order of first appearance (Mooncake's
// already are), with where each was first seen: its position, the id before
// it, the line; for the check that every later sighting agrees.
struct IdMap {
  struct Seen {
    uint64_t id;
    int32_t depth, parent;  // parent: dense, -1 at position 0
    int64_t line;
  };
  std::unordered_map<uint64_t, int32_t> dense;
  std::vector<Seen> seen;

  std::string name(int32_t d) const { return d < 0 ? std::string("nothing") : "id " + std::to_string(seen[static_cast<size_t>(d)].id); }

  int32_t add(uint64_t id, int32_t depth, int32_t parent, int64_t line, const std::string& at) {
    auto [it, fresh] = dense.try_emplace(id, static_cast<int32_t>(seen.size()));
    if (fresh) {
      if (seen.size() > static_cast<size_t>(kMaxId)) throw Error(at + "more distinct hash ids than a replay can hold");
      seen.push_back({id, depth, parent, line});
      return it->second;
    }
    const Seen& s = seen[static_cast<size_t>(it->second)];
    if (s.depth != depth || s.parent != parent)
      throw Error(at + "hash id " + std::to_string(id) + " is at position " + std::to_string(depth) + " after " +
                  name(parent) + ", but line " + std::to_string(s.line) + " has it at position " + std::to_string(s.depth) +
                  " after " + name(s.parent) + ": the hash ids do not form prefix chains");
    return it->second;
  }
};

// One parsed record into `out`, its ids numbered densely.
void add_record(const trace::TraceRecord& rec, std::string_view source, IdMap& ids, ReplayTrace& out,
                std::vector<int32_t>& chain) {
  const std::string at = where(source, rec.line);
  chain.clear();
  for (size_t i = 0; i < rec.hash_ids.size(); ++i)
    chain.push_back(ids.add(rec.hash_ids[i], static_cast<int32_t>(i), i == 0 ? -1 : chain.back(), rec.line, at));
  out.add(rec.input_length, chain, rec.timestamp_ms, rec.output_length);
}

}  // namespace

void ReplayTrace::add(int64_t input_tokens, std::span<const int32_t> chain, int64_t arrival_ms, int64_t output_tokens) {
  const auto n = static_cast<int64_t>(chain.size());
  if (n < 1 || input_tokens <= kTraceBlockTokens * (n - 1) || input_tokens > kTraceBlockTokens * n)
    throw Error("a request of " + std::to_string(input_tokens) + " tokens cannot have " + std::to_string(n) + " blocks");
  for (int32_t id : chain)
    if (id < 0 || id > kMaxId) throw Error("hash id " + std::to_string(id) + " is out of range");
  if (arrival_ms < 0 || output_tokens < 0) throw Error("a request's arrival and output length must be >= 0");
  input_tokens_.push_back(input_tokens);
  arrival_ms_.push_back(arrival_ms);
  output_tokens_.push_back(output_tokens);
  ids_.insert(ids_.end(), chain.begin(), chain.end());
  first_.push_back(static_cast<int64_t>(ids_.size()));
  for (int32_t id : chain) id_limit_ = std::max(id_limit_, id + 1);
  max_chain_ = std::max(max_chain_, static_cast<int32_t>(n));
}

ReplayTrace parse_replay_trace(std::string_view text, std::string_view source) {
  ReplayTrace out;
  IdMap ids;
  std::vector<int32_t> chain;
  int64_t line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    trace::TraceRecord rec;
    if (trace::parse_trace_line(l, source, line, rec)) add_record(rec, source, ids, out, chain);
  }
  if (out.requests() == 0) throw Error(std::string(source) + ": no requests in the trace");
  return out;
}

ReplayTrace read_replay_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the trace file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read the trace file");
  return parse_replay_trace(buf.str(), path);
}

TraceSummary summarize(const ReplayTrace& trace) {
  TraceSummary s;
  std::vector<uint8_t> seen(static_cast<size_t>(trace.id_limit()), 0);
  s.requests = trace.requests();
  s.block_refs = trace.block_refs();
  for (int64_t r = 0; r < trace.requests(); ++r) {
    const auto chain = trace.chain(r);
    s.prompt_tokens += trace.input_tokens(r);
    size_t k = 0;
    while (k < chain.size() && seen[static_cast<size_t>(chain[k])]) ++k;
    for (size_t i = 0; i < k; ++i) s.unbounded_hit_tokens += trace.block_tokens(r, i);
    s.unbounded_hit_blocks += static_cast<int64_t>(k);
    for (int32_t id : chain) {
      s.distinct_blocks += !seen[static_cast<size_t>(id)];
      seen[static_cast<size_t>(id)] = 1;
    }
  }
  return s;
}

}  // namespace kvgate::sim
