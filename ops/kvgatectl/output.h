// What kvgatectl prints on stdout: aligned tables and "key: value" lists
// for people, or the server's JSON (one line) with --json for scripts;
// and the few conversions the tables share (a JSON scalar as text, micro-
// dollars as dollars, nanoseconds since the epoch as a UTC time).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

namespace kvgatectl {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Columns two spaces apart; a column whose every cell is a number is
  // right-aligned. An empty table prints its header and "(none)".
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

// "key:  value" lines, the values aligned.
void print_fields(std::ostream& out, const Fields& fields);

// An object's members as fields, nested objects flattened to "a.b".
Fields flatten(const boost::json::object& o, const std::string& prefix = "");

void print_json(std::ostream& out, const boost::json::value& v);

// A JSON value as a table cell: strings bare, null and "" "-", numbers as written,
// arrays and objects as compact JSON.
std::string cell(const boost::json::value* v);
std::string cell(const boost::json::object& o, std::string_view key);
// An integer member, 0 when absent or not an integer.
int64_t integer(const boost::json::object& o, std::string_view key);
// The object at `key` (an empty one when absent or not an object).
const boost::json::object& object_at(const boost::json::object& o, std::string_view key);
const boost::json::array& array_at(const boost::json::object& o, std::string_view key);

// 913 -> "$0.000913"; 150000 -> "$0.15".
std::string usd_from_micros(int64_t micros);
// A limit where 0 means none: "unlimited", else the number.
std::string limit_text(int64_t n);
// Nanoseconds since the epoch -> "2025-01-31 12:00:00Z"; 0 -> "-".
std::string utc_from_ns(int64_t ns);

}  // namespace kvgatectl
