#include "ops/kvgatectl/output.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <boost/json.hpp>

namespace kvgatectl {
namespace {

namespace json = boost::json;

bool dash(const std::string& s) { return s == "-"; }

bool numeric(const std::string& s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '$') ? 1 : 0;
  const size_t n = s.back() == '%' ? s.size() - 1 : s.size();
  if (i >= n) return false;
  for (; i < n; ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) return false;
  return true;
}

// The shortest decimal that reads back as the same double: 0.1, not 1E-1.
std::string number_text(double d) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

}  // namespace

void Table::print(std::ostream& out) const {
  const size_t n = headers_.size();
  std::vector<size_t> width(n);
  // Right-aligned: a column of numbers (and "-" for none), at least one.
  std::vector<bool> right(n, true), any_number(n, false);
  for (size_t c = 0; c < n; ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < n && c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
      if (numeric(row[c])) any_number[c] = true;
      else if (!dash(row[c])) right[c] = false;
    }
  for (size_t c = 0; c < n; ++c) right[c] = right[c] && any_number[c];
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < n; ++c) {
      const std::string& v = c < cells.size() ? cells[c] : std::string();
      const std::string pad(width[c] - std::min(width[c], v.size()), ' ');
      if (c) s += "  ";
      s += right[c] ? pad + v : (c + 1 == n ? v : v + pad);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  if (rows_.empty()) out << "(none)\n";
}

void print_fields(std::ostream& out, const Fields& fields) {
  size_t w = 0;
  for (const auto& [k, v] : fields) w = std::max(w, k.size());
  for (const auto& [k, v] : fields) out << k << ':' << std::string(w - k.size() + 2, ' ') << v << '\n';
}

Fields flatten(const json::object& o, const std::string& prefix) {
  Fields f;
  for (const auto& m : o) {
    const std::string key = prefix + std::string(m.key());
    if (m.value().is_object()) {
      Fields inner = flatten(m.value().as_object(), key + ".");
      f.insert(f.end(), inner.begin(), inner.end());
    } else {
      f.emplace_back(key, cell(&m.value()));
    }
  }
  return f;
}

void print_json(std::ostream& out, const json::value& v) { out << json::serialize(v) << '\n'; }

std::string cell(const json::value* v) {
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return v->as_string().empty() ? "-" : std::string(v->as_string());
  if (v->is_double()) return number_text(v->as_double());
  return json::serialize(*v);
}

std::string cell(const json::object& o, std::string_view key) { return cell(o.if_contains(key)); }

int64_t integer(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  return 0;
}

const json::object& object_at(const json::object& o, std::string_view key) {
  static const json::object kEmpty;
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? v->as_object() : kEmpty;
}

const json::array& array_at(const json::object& o, std::string_view key) {
  static const json::array kEmpty;
  const json::value* v = o.if_contains(key);
  return v && v->is_array() ? v->as_array() : kEmpty;
}

std::string usd_from_micros(int64_t micros) {
  const bool negative = micros < 0;
  const uint64_t m = negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(m / 1000000),
                static_cast<unsigned long long>(m % 1000000));
  std::string s = buf;
  // Keep at least cents: $0.15, $1.00, $0.000913.
  while (s.size() > s.find('.') + 3 && s.back() == '0') s.pop_back();
  return (negative ? "-$" : "$") + s;
}

std::string limit_text(int64_t n) { return n == 0 ? "unlimited" : std::to_string(n); }

std::string utc_from_ns(int64_t ns) {
  if (ns <= 0) return "-";
  const time_t t = static_cast<time_t>(ns / 1000000000);
  struct tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

}  // namespace kvgatectl
