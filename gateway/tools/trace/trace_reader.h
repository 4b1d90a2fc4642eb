// Reading a Mooncake request trace (FAST'25 release, JSONL): one request per
// line, in arrival order,
//
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52,
//    "hash_ids": [46, 47, ..., 2354]}
//
// timestamp: arrival in ms from the trace's start; input_length and
// output_length: prompt and output tokens; hash_ids: one id per block of
// kMooncakeBlockTokens prompt tokens, where hash_ids[i] names the prefix up
// to and including block i (two requests with the same id at position i
// share their first (i+1) blocks). See ../shared/traces/README.md.
//
// The reader checks what the load generator relies on, and a line that
// breaks it is an Error naming the file, the line and the field, never a
// crash and never a silently skipped request:
//   - the line is a JSON object; the four fields are present; the others
//     are ignored (later Mooncake traces add some);
//   - timestamp, input_length, output_length are integers >= 0 (a number
//     with no fraction counts), input_length >= 1;
//   - hash_ids is an array of integers >= 0 with exactly
//     ceil(input_length / block_tokens) entries (the chain covers the prompt);
//   - timestamps never decrease from one line to the next.
// Blank lines (the file's final newline) are skipped.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::trace {

// Tokens per hash id in the Mooncake traces (checked against the data in
// ../shared/traces/README.md).
inline constexpr int64_t kMooncakeBlockTokens = 512;

struct TraceRecord {
  int64_t timestamp_ms = 0;
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<uint64_t> hash_ids;
  int64_t line = 0;  // 1-based line in its file, for messages

  bool operator==(const TraceRecord&) const = default;
};

struct TraceFormat {
  int64_t block_tokens = kMooncakeBlockTokens;
};

// One line. `source` names the file in errors ("FILE:LINE: ..."). Returns
// false (and leaves `out` alone) for a blank line; throws kvgate::Error for
// a bad one.
bool parse_trace_line(std::string_view line, std::string_view source, int64_t line_no, TraceRecord& out,
                      const TraceFormat& format = {});

// A whole trace held in memory (what the fuzz target feeds).
std::vector<TraceRecord> parse_trace(std::string_view text, std::string_view source,
                                     const TraceFormat& format = {});

// The file at `path`; an unreadable file is an Error naming it.
std::vector<TraceRecord> read_trace_file(const std::string& path, const TraceFormat& format = {});

}  // namespace kvgate::trace
