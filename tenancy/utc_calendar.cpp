// Calendar arithmetic is delegated to <chrono>'s civil calendar; floor (not
// truncation) keeps instants before 1970 on the right day.
#include "tenancy/utc_calendar.h"

#include <chrono>
#include <cstdio>

namespace kvgate::tenancy {
namespace {

using namespace std::chrono;
using NsPoint = sys_time<nanoseconds>;

int64_t to_ns(sys_days d) { return duration_cast<nanoseconds>(d.time_since_epoch()).count(); }

year_month_day civil(int64_t ns) { return year_month_day{floor<days>(NsPoint{nanoseconds{ns}})}; }

}  // namespace

int64_t utc_day_start_ns(int64_t ns) { return to_ns(floor<days>(NsPoint{nanoseconds{ns}})); }

int64_t utc_month_start_ns(int64_t ns) {
  const year_month_day d = civil(ns);
  return to_ns(sys_days{d.year() / d.month() / 1});
}

int64_t utc_next_month_start_ns(int64_t ns) {
  const year_month_day d = civil(ns);
  return to_ns(sys_days{(d.year() / d.month() + months{1}) / 1});
}

std::string utc_date(int64_t ns) {
  const year_month_day d = civil(ns);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(d.year()),
                static_cast<unsigned>(d.month()), static_cast<unsigned>(d.day()));
  return buf;
}

}  // namespace kvgate::tenancy
