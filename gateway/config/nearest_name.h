// nearest_name: the "did you mean" behind unknown config keys and tables.
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kvgate::config {

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, when it is close enough to be a typo of
// it (at most one edit per three characters, at least one) or one of the
// two contains the other (io_thread, max_connections_count); ties go to the
// earlier candidate, so the answer is stable.
std::optional<std::string> nearest_name(std::string_view word, std::span<const std::string> candidates);

}  // namespace kvgate::config
