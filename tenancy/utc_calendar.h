// UTC day and month boundaries for ledger reports and the monthly spend cap.
// Times are nanoseconds since the Unix epoch.
#pragma once

#include <cstdint>
#include <string>

namespace kvgate::tenancy {

int64_t utc_day_start_ns(int64_t ns);
int64_t utc_month_start_ns(int64_t ns);
int64_t utc_next_month_start_ns(int64_t ns);
// "YYYY-MM-DD" of the UTC day containing ns.
std::string utc_date(int64_t ns);

}  // namespace kvgate::tenancy
