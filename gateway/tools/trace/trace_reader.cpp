// Mooncake trace lines to TraceRecords, every refusal naming file:line and
// the field. Pure; any thread.
#include "gateway/tools/trace/trace_reader.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "base/error.h"

namespace kvgate::trace {
namespace json = boost::json;

namespace {

std::string_view kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

// A non-negative integer that fits int64, however JSON spelled it (7 or 7.0).
std::optional<int64_t> non_negative(const json::value& v) {
  if (v.is_int64()) return v.get_int64() >= 0 ? std::optional(v.get_int64()) : std::nullopt;
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    const double d = v.get_double();
    // 2^63 itself does not fit: the bound is exclusive.
    if (!std::isfinite(d) || d != std::floor(d) || d < 0 || d >= 9223372036854775808.0) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// A number as a person wrote it, near enough: 1.5, -3, 1e+20 (Boost's own
// serializer writes 1.5E0).
std::string number_text(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v.get_double());
  return buf;
}

class LineErrors {
 public:
  LineErrors(std::string_view source, int64_t line) : where_(std::string(source) + ":" + std::to_string(line) + ": ") {}
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + what); }

 private:
  std::string where_;
};

int64_t required_count(const json::object& o, std::string_view key, const LineErrors& err) {
  const json::value* v = o.if_contains(key);
  if (!v) err.fail("field \"" + std::string(key) + "\" is missing");
  auto n = non_negative(*v);
  if (!n) {
    if (v->is_number())
      err.fail("field \"" + std::string(key) + "\" must be an integer >= 0 (got " + number_text(*v) + ")");
    err.fail("field \"" + std::string(key) + "\" must be an integer, not " + std::string(kind_name(*v)));
  }
  return *n;
}

}  // namespace

bool parse_trace_line(std::string_view line, std::string_view source, int64_t line_no, TraceRecord& out,
                      const TraceFormat& format) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return false;
  const LineErrors err(source, line_no);
  json::error_code ec;
  const json::value v = json::parse(line, ec);
  if (ec) err.fail("not a JSON object: " + ec.message());
  if (!v.is_object()) err.fail("a line must be a JSON object, not " + std::string(kind_name(v)));
  const json::object& o = v.get_object();

  TraceRecord r;
  r.line = line_no;
  r.timestamp_ms = required_count(o, "timestamp", err);
  r.input_length = required_count(o, "input_length", err);
  r.output_length = required_count(o, "output_length", err);
  if (r.input_length < 1) err.fail("field \"input_length\" must be at least 1 (got 0)");

  const json::value* ids = o.if_contains("hash_ids");
  if (!ids) err.fail("field \"hash_ids\" is missing");
  if (!ids->is_array()) err.fail("field \"hash_ids\" must be an array, not " + std::string(kind_name(*ids)));
  const json::array& a = ids->get_array();
  r.hash_ids.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    auto id = non_negative(a[i]);
    if (!id)
      err.fail("field \"hash_ids[" + std::to_string(i) + "]\" must be an integer >= 0 (got " +
               (a[i].is_number() ? number_text(a[i]) : std::string(kind_name(a[i]))) + ")");
    r.hash_ids.push_back(static_cast<uint64_t>(*id));
  }
  // The chain must cover the prompt exactly: the load generator builds the
  // prompt from these blocks, so a short or long chain would silently change
  // both the prompt's length and what it shares.
  const int64_t B = format.block_tokens;
  const int64_t blocks = r.input_length / B + (r.input_length % B != 0);
  if (static_cast<int64_t>(a.size()) != blocks)
    err.fail("field \"hash_ids\" has " + std::to_string(a.size()) + " ids, but input_length " +
             std::to_string(r.input_length) + " needs " + std::to_string(blocks) + " blocks of " +
             std::to_string(B) + " tokens");
  out = std::move(r);
  return true;
}

std::vector<TraceRecord> parse_trace(std::string_view text, std::string_view source, const TraceFormat& format) {
  if (format.block_tokens < 1) throw Error("trace block size must be at least 1 token");
  std::vector<TraceRecord> out;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    TraceRecord r;
    if (parse_trace_line(text.substr(pos, end - pos), source, line_no, r, format)) {
      if (!out.empty() && r.timestamp_ms < out.back().timestamp_ms)
        LineErrors(source, line_no)
            .fail("field \"timestamp\" " + std::to_string(r.timestamp_ms) + " is before line " +
                  std::to_string(out.back().line) + "'s " + std::to_string(out.back().timestamp_ms) +
                  " (a trace is in arrival order)");
      out.push_back(std::move(r));
    }
    pos = end + 1;
  }
  return out;
}

std::vector<TraceRecord> read_trace_file(const std::string& path, const TraceFormat& format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the trace file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read the trace file");
  return parse_trace(s.str(), path, format);
}

}  // namespace kvgate::trace
