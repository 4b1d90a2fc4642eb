#include "ops/kvgatectl/admin_client.h"

#include <boost/json.hpp>

#include "ops/kvgatectl/cli_error.h"

namespace kvgatectl {
namespace {

namespace json = boost::json;

// The server's error message from its {"error": {"message": ...}} body,
// else the body itself (cut short), else the bare status.
std::string error_message(const HttpResponse& r) {
  boost::system::error_code ec;
  const json::value v = json::parse(r.body, ec);
  if (!ec && v.is_object()) {
    if (const json::value* e = v.as_object().if_contains("error"); e && e->is_object()) {
      if (const json::value* m = e->as_object().if_contains("message"); m && m->is_string())
        return std::string(m->as_string());
    }
  }
  std::string body = r.body.substr(0, 300);
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  return body.empty() ? "no message" : body;
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       c == '_' || c == '.' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string path_segment(std::string_view s) { return percent_encode(s); }
std::string query_value(std::string_view s) { return percent_encode(s); }

HttpResponse AdminClient::call(std::string_view method, std::string_view target, const std::string& body,
                               bool has_body) const {
  HeaderList headers = {{"authorization", "Bearer " + token_}, {"accept", "application/json, text/csv"}};
  if (has_body) headers.emplace_back("content-type", "application/json");
  HttpResponse r = http_.send(method, target, headers, body);
  if (r.status == 401 || r.status == 403)
    throw bad_token("the server refused the admin token (HTTP " + std::to_string(r.status) + "): " + error_message(r));
  if (r.status >= 400) throw refused(error_message(r) + " (HTTP " + std::to_string(r.status) + ")");
  return r;
}

json::value AdminClient::json_call(std::string_view method, std::string_view target,
                                   const std::optional<json::value>& body) const {
  const HttpResponse r = call(method, target, body ? json::serialize(*body) : std::string(), body.has_value());
  boost::system::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec)
    throw refused("the server's answer to " + std::string(method) + " " + std::string(target) +
                  " is not JSON (HTTP " + std::to_string(r.status) + ")");
  return v;
}

std::string AdminClient::get_text(std::string_view target) const { return call("GET", target, {}, false).body; }

}  // namespace kvgatectl
