// AccessLog: one line per generation request, appended to the file
// [log] access_log names (off by default), for the operator who wants
// every request's outcome in a file of its own, as a web server's access
// log. A request the pipeline started is logged when it is settled (its
// ledger record written); one it refused (quota 429, engine full 503, a
// prompt past the engine's limits 400) when it is refused. Requests turned
// away before the pipeline (a bad key, a malformed body) are not in it:
// they have no tenant to name; the metrics count them.
//
// A line is logfmt, key=value separated by single spaces, in this order:
//
//   time=2025-01-31T12:00:00.123Z request_id=req_... tenant=acme key=key_...
//   status=200 finish=length prompt_tokens=11 cached_tokens=0
//   completion_tokens=32 cost_micros=21 latency_ms=184.202 ttft_ms=12.051
//
// (one line in the file). Values are never quoted: every one is a number,
// a time, or an id of [A-Za-z0-9_.-] (tenancy's ids and the server's request
// ids). What it never holds: the prompt, the output, an API key, a cache
// scope. The fields are documented in docs/operations.md ("Access log").
//
// Threads: write() from any thread (the I/O threads for refusals, the
// blocking pool for settled requests); each line is one write(2) under a
// mutex, so lines never interleave. The file is opened O_APPEND, so a
// rotation that truncates it in place (logrotate's copytruncate) is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace kvgate::serving {

struct AccessEntry {
  int64_t time_ns = 0;  // wall clock, ns since the epoch: when it was settled or refused
  std::string_view request_id, tenant, key_id;
  int status = 200;           // the HTTP status the client was answered (see docs/operations.md for streams)
  std::string_view finish;    // stop | length | cancelled | error; "-" for a refused request
  uint64_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0, cost_micros = 0;
  double latency_ms = 0;      // the pipeline's start to the settle (ledger record written), or to the refusal
  double ttft_ms = -1;        // arrival at the engine to the first token; < 0: none ("-")
};

class AccessLog {
 public:
  // Opens (creating, mode 0640) `path` for appending. Throws kvgate::Error
  // naming it when it cannot.
  static std::unique_ptr<AccessLog> open(const std::string& path);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Appends the entry's line. A failed write (a full disk) is counted and
  // told once on stderr; it never fails the request.
  void write(const AccessEntry& e);
  uint64_t write_errors() const;

  const std::string& path() const { return path_; }

  // The entry's line, newline included.
  static std::string format(const AccessEntry& e);

 private:
  AccessLog(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  const std::string path_;
  const int fd_;
  mutable Mutex mu_;
  uint64_t write_errors_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kvgate::serving
