// The times and durations `usage` takes, all in UTC:
//   a time:     unix seconds ("1735689600"), a date ("2025-01-01", its
//               midnight), a date and time ("2025-01-01T12:00:00Z", the Z
//               and the seconds optional, a space for the T allowed), "now"
//   a duration: a number with a unit, s, m, h or d ("90m", "7d")
// Anything else is a usage error naming the flag.
#pragma once

#include <cstdint>
#include <string>

namespace kvgatectl {

int64_t parse_time(const std::string& flag, const std::string& text);
int64_t parse_duration(const std::string& flag, const std::string& text);
int64_t now_unix_seconds();

}  // namespace kvgatectl
