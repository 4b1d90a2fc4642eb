// ListenAddress: where a listener binds, written "host:port" in the config
// and on the command line ("127.0.0.1:8443", "[::1]:8443", "0.0.0.0:443").
// A plain value; safe to share as const.
//
// Invariant: parse_listen_address(a.str()) == a for every address that
// parse_listen_address returned. Port 0 means "any free port", which tests
// use to run servers side by side.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvgate::config {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 literal or a host name, without brackets
  uint16_t port = 0;

  // "host:port", with brackets around an IPv6 host.
  std::string str() const;
  bool operator==(const ListenAddress&) const = default;
};

// Throws kvgate::Error saying what is wrong ("no port", "port 70000 is out of
// range") for anything but host:port, [v6]:port with a port in 0..65535.
ListenAddress parse_listen_address(std::string_view text);

}  // namespace kvgate::config
