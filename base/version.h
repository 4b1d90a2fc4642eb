// Which build this is: the git revision of the source tree it was built
// from ("git 382411f0c2ab", "-dirty" when it had uncommitted changes), for
// `kvgate --version`, the start-up line and /health. Defined in a file the
// build writes (cmake/version.cmake), in the kvgate_version library.
#pragma once

#include <string_view>

namespace kvgate {

std::string_view build_version();

}  // namespace kvgate
