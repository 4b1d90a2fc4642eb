// Body to JSON object, with errors that say where. Pure; any thread.
#include "gateway/openai/json_body.h"

#include <string>

#include <boost/json/stream_parser.hpp>

#include "engine/tokenizer/utf8.h"
#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

std::string position(std::string_view body, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < body.size(); ++i) {
    if (body[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
         std::to_string(offset) + ")";
}

ApiError invalid_utf8(std::string where) {
  return invalid_request("The request body is not valid UTF-8: " + where + ".", std::nullopt, "invalid_utf8");
}

// Depth is bounded by the parser's max_depth, so the recursion is too.
void check_strings(const json::value& v, const std::string& path) {
  auto check = [&](std::string_view s, const std::string& where) {
    if (auto bad = first_invalid_utf8(s)) throw invalid_utf8("in " + where + " at byte " + std::to_string(*bad));
  };
  switch (v.kind()) {
    case json::kind::string:
      check(v.get_string(), path.empty() ? "the body" : path);
      break;
    case json::kind::array: {
      const auto& a = v.get_array();
      for (std::size_t i = 0; i < a.size(); ++i) check_strings(a[i], path + "[" + std::to_string(i) + "]");
      break;
    }
    case json::kind::object:
      for (const auto& kv : v.get_object()) {
        check(kv.key(), "a key of " + (path.empty() ? std::string("the body") : path));
        check_strings(kv.value(), path.empty() ? std::string(kv.key()) : path + "." + std::string(kv.key()));
      }
      break;
    default:
      break;
  }
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = utf8_decode(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

json::object parse_json_object(std::string_view body) {
  if (auto bad = first_invalid_utf8(body)) throw invalid_utf8(position(body, *bad));

  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  json::stream_parser parser(json::storage_ptr(), opts);
  json::error_code ec;
  const std::size_t consumed = parser.write(body.data(), body.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos)
      throw invalid_json("the body is empty", position(body, body.size()));
    const std::size_t at = consumed < body.size() ? consumed : body.size();
    throw invalid_json(ec.message(), position(body, at));
  }
  json::value v = parser.release();
  if (!v.is_object()) throw invalid_json("the body is not a JSON object", position(body, 0));
  check_strings(v, "");
  return std::move(v.get_object());
}

}  // namespace kvgate::openai
