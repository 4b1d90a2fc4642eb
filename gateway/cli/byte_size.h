// Parses byte counts as operators write them: "4294967296", "4GiB", "512MB".
#pragma once

#include <cstdint>
#include <string_view>

namespace kvgate::cli {

// Throws kvgate::Error naming the text when it is not a byte count.
int64_t parse_byte_size(std::string_view text);

}  // namespace kvgate::cli
