// A Mooncake request trace (FAST'25 release, JSONL; ../shared/traces/README.md)
// held for replay through the cache: per request its prompt length, its
// chain of hash ids, its arrival and output length, packed one request
// after another.
//
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52,
//    "hash_ids": [46, 47, ..., 2354]}
//
// hash_ids[i] names the prompt's first (i + 1) blocks of 512 tokens, so two
// requests with the same id at position i share that prefix. The last block
// holds input_length - 512 (n - 1) tokens.
//
// Lines are read by the load generator's reader (gateway/loadgen/
// trace_reader.h: the four fields, integers, ceil(input_length / 512) ids),
// line by line, into this packed form, each hash id renumbered densely in
// order of first appearance (Mooncake's ids already are, so they keep their
// values); on top of that the replay checks that the ids form prefix
// chains: an id is always at the same position, after the same parent id
// (else a cache keyed by them would be wrong). A line that breaks
// any of it is a kvgate::Error naming the file, the line and the field.
// Blank lines are skipped; a trace with no request is an error.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::sim {

inline constexpr int64_t kTraceBlockTokens = 512;

class ReplayTrace {
 public:
  int64_t requests() const { return static_cast<int64_t>(input_tokens_.size()); }
  int64_t block_refs() const { return static_cast<int64_t>(ids_.size()); }
  // The number of distinct hash ids: ids are 0 .. id_limit() - 1.
  int32_t id_limit() const { return id_limit_; }
  int32_t max_chain() const { return max_chain_; }

  std::span<const int32_t> chain(int64_t r) const {
    return std::span(ids_).subspan(static_cast<size_t>(first_[r]), static_cast<size_t>(first_[r + 1] - first_[r]));
  }
  int64_t input_tokens(int64_t r) const { return input_tokens_[r]; }
  // Arrival in ms from the trace's start, and the tokens the request
  // generated: what the routed replay's load model is made of.
  int64_t arrival_ms(int64_t r) const { return arrival_ms_[r]; }
  int64_t output_tokens(int64_t r) const { return output_tokens_[r]; }
  // Tokens block i of request r holds: 512, except the last block's remainder.
  int64_t block_tokens(int64_t r, size_t i) const {
    const auto n = static_cast<size_t>(first_[r + 1] - first_[r]);
    return i + 1 < n ? kTraceBlockTokens : input_tokens_[r] - kTraceBlockTokens * static_cast<int64_t>(n - 1);
  }
  // Where request r's chain starts among all block references.
  int64_t first_ref(int64_t r) const { return first_[r]; }

  // One request (the parser's and the tests' way in). Checks only lengths;
  // parse_replay_trace checks the rest.
  void add(int64_t input_tokens, std::span<const int32_t> chain, int64_t arrival_ms = 0, int64_t output_tokens = 0);

 private:
  std::vector<int64_t> input_tokens_, arrival_ms_, output_tokens_;
  std::vector<int64_t> first_{0};
  std::vector<int32_t> ids_;
  int32_t id_limit_ = 0, max_chain_ = 0;
};

// `source` names the input in errors ("FILE:LINE: ...").
ReplayTrace parse_replay_trace(std::string_view text, std::string_view source);
// The file at `path`; an unreadable file is an Error naming it.
ReplayTrace read_replay_trace(const std::string& path);

struct TraceSummary {
  int64_t requests = 0, block_refs = 0, distinct_blocks = 0, prompt_tokens = 0;
  // With a cache that never evicts: the longest previously seen prefix.
  int64_t unbounded_hit_tokens = 0, unbounded_hit_blocks = 0;
};
TraceSummary summarize(const ReplayTrace& trace);

}  // namespace kvgate::sim
