#include "gateway/serving/access_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/error.h"

namespace kvgate::serving {
namespace {

// RFC 3339 in UTC with milliseconds: 2025-01-31T12:00:00.123Z.
std::string utc_time(int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[96];  // room for any int the format could print, as -Wformat-truncation counts
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>((ns % 1'000'000'000) / 1'000'000));
  return buf;
}

std::string millis(double ms) {
  if (!(ms >= 0)) return "-";  // none, or NaN
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  return buf;
}

// An id as logged: empty is "-", so that every field has a value.
std::string_view id(std::string_view v) { return v.empty() ? std::string_view("-") : v; }

}  // namespace

std::unique_ptr<AccessLog> AccessLog::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) throw Error(path + ": cannot open the access log: " + std::strerror(errno));
  return std::unique_ptr<AccessLog>(new AccessLog(path, fd));
}

AccessLog::~AccessLog() { ::close(fd_); }

std::string AccessLog::format(const AccessEntry& e) {
  std::string line;
  line.reserve(320);
  line.append("time=").append(utc_time(e.time_ns));
  line.append(" request_id=").append(id(e.request_id));
  line.append(" tenant=").append(id(e.tenant));
  line.append(" key=").append(id(e.key_id));
  line.append(" status=").append(std::to_string(e.status));
  line.append(" finish=").append(id(e.finish));
  line.append(" prompt_tokens=").append(std::to_string(e.prompt_tokens));
  line.append(" cached_tokens=").append(std::to_string(e.cached_tokens));
  line.append(" completion_tokens=").append(std::to_string(e.completion_tokens));
  line.append(" cost_micros=").append(std::to_string(e.cost_micros));
  line.append(" latency_ms=").append(millis(e.latency_ms));
  line.append(" ttft_ms=").append(millis(e.ttft_ms));
  line.push_back('\n');
  return line;
}

void AccessLog::write(const AccessEntry& e) {
  const std::string line = format(e);
  MutexLock lock(mu_);
  ssize_t n;
  do {
    n = ::write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(line.size())) return;
  if (write_errors_++ == 0)
    std::fprintf(stderr, "kvgate: access log %s: %s (requests go on; further failures are counted, not told)\n",
                 path_.c_str(), n < 0 ? std::strerror(errno) : "short write");
}

uint64_t AccessLog::write_errors() const {
  MutexLock lock(mu_);
  return write_errors_;
}

}  // namespace kvgate::serving
