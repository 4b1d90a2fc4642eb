// "host:port" parsing. The host is checked only for shape (non-empty, no
// spaces or brackets out of place); whether it resolves is the listener's
// business at bind time, where the error names the address.
#include "gateway/config/listen_address.h"

#include <charconv>

#include "base/error.h"

namespace kvgate::config {
namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  std::string msg = "'";
  msg.append(text).append("' is not a listen address: ").append(why);
  msg.append(" (examples: 127.0.0.1:8443, 0.0.0.0:443, [::1]:8443)");
  throw Error(msg);
}

bool host_chars_ok(std::string_view host, bool v6) {
  for (char c : host) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7f || c == '[' || c == ']' || c == '/' || (!v6 && c == ':')) return false;
  }
  return true;
}

}  // namespace

std::string ListenAddress::str() const {
  const bool v6 = host.find(':') != std::string::npos;
  std::string s = v6 ? "[" + host + "]" : host;
  return s.append(":").append(std::to_string(port));
}

ListenAddress parse_listen_address(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) bad(text, "no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  const bool v6 = !host.empty() && host.front() == '[';
  if (v6) {
    if (host.size() < 3 || host.back() != ']') bad(text, "an IPv6 host is written [addr]:port");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    bad(text, "an IPv6 host is written in brackets, [addr]:port");
  }
  if (host.empty()) bad(text, "no host (0.0.0.0 listens on every interface)");
  if (!host_chars_ok(host, v6)) bad(text, "the host has characters a host name cannot have");
  if (port.empty()) bad(text, "no port");
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (ec != std::errc() || end != port.data() + port.size()) bad(text, "the port is not a number");
  if (n > 65535) bad(text, "the port is out of range (0..65535)");
  return ListenAddress{std::string(host), static_cast<uint16_t>(n)};
}

}  // namespace kvgate::config
