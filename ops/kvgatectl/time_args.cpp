#include "ops/kvgatectl/time_args.h"

#include <time.h>

#include <cstdio>

#include "ops/kvgatectl/cli_error.h"

namespace kvgatectl {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

int64_t now_unix_seconds() { return static_cast<int64_t>(::time(nullptr)); }

int64_t parse_time(const std::string& flag, const std::string& text) {
  if (text == "now") return now_unix_seconds();
  if (all_digits(text) && text.size() <= 12) return std::stoll(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, n = 0;
  std::string t = text;
  if (t.size() > 10 && (t[10] == 'T' || t[10] == ' ')) t[10] = 'T';
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  bool ok = false;
  if (t.size() == 10) {
    ok = std::sscanf(t.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10;
  } else if (t.size() == 16) {
    ok = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5 && n == 16;
  } else if (t.size() == 19) {
    ok = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) == 6 && n == 19;
  }
  ok = ok && y >= 1970 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 60;
  if (ok) {
    struct tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    const time_t v = ::timegm(&tm);
    // timegm normalizes 2025-02-30 to March: refuse what it had to move.
    if (tm.tm_mday == d && tm.tm_mon == mo - 1) return static_cast<int64_t>(v);
  }
  throw usage_error(flag + ": '" + text +
                    "' is not a time (unix seconds, YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]Z or now; UTC)");
}

int64_t parse_duration(const std::string& flag, const std::string& text) {
  const std::string digits = text.empty() ? text : text.substr(0, text.size() - 1);
  const char unit = text.empty() ? '\0' : text.back();
  int64_t scale = 0;
  switch (unit) {
    case 's': scale = 1; break;
    case 'm': scale = 60; break;
    case 'h': scale = 3600; break;
    case 'd': scale = 86400; break;
    default: break;
  }
  if (scale == 0 || !all_digits(digits) || digits.size() > 9)
    throw usage_error(flag + ": '" + text + "' is not a duration (a number and s, m, h or d, e.g. 7d)");
  return std::stoll(digits) * scale;
}

}  // namespace kvgatectl
