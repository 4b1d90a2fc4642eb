// The ids the policies order requests and blocks by, defined once here, at
// the bottom of the dependency graph, for every module above.
#pragma once

#include <cstdint>

namespace kvgate {

using RequestId = uint64_t;  // numbered by the engine
// A tenant's non-secret label: fairness, cache statistics, block events and
// eviction shares group by it. Never the secret cache scope.
using TenantId = uint64_t;

}  // namespace kvgate
