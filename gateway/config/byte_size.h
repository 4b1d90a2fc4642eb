// Byte counts as operators write them ("4294967296", "4GiB", "512MB",
// "16 KiB") and back. Pure functions, no state: safe from any thread.
//
// Invariant: parse_byte_size(format_byte_size(n)) == n for every n >= 0, so
// a printed config reads back to the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvgate::config {

// Throws kvgate::Error naming the text when it is not a whole, non-negative
// number of bytes below 2^63 (a decimal count with an optional unit: B, KB,
// MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)).
int64_t parse_byte_size(std::string_view text);

// The largest binary unit that divides `bytes` exactly ("4GiB", "16KiB"),
// else plain bytes ("1000"). `bytes` must be >= 0.
std::string format_byte_size(int64_t bytes);

// `bytes` for a reader, to one decimal in the largest binary unit it
// reaches ("640.0 MiB", "2.2 GiB", "512 B"); not for a config file, which
// takes format_byte_size's exact form. `bytes` must be >= 0.
std::string readable_byte_size(int64_t bytes);

}  // namespace kvgate::config
