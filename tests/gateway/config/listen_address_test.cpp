// host:port addresses: IPv4, IPv6 in brackets, names, port 0, and the
// shapes that are refused with a reason.
#include "gateway/config/listen_address.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace kvgate::config {
namespace {

TEST(ListenAddress, ReadsHostAndPort) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:8443"), (ListenAddress{"127.0.0.1", 8443}));
  EXPECT_EQ(parse_listen_address("0.0.0.0:0"), (ListenAddress{"0.0.0.0", 0}));
  EXPECT_EQ(parse_listen_address("[::1]:443"), (ListenAddress{"::1", 443}));
  EXPECT_EQ(parse_listen_address("localhost:65535"), (ListenAddress{"localhost", 65535}));
}

TEST(ListenAddress, WritesWhatItReads) {
  for (const char* text : {"127.0.0.1:8443", "[::1]:443", "[fe80::1]:0", "example.com:80"})
    EXPECT_EQ(parse_listen_address(text).str(), text);
}

TEST(ListenAddress, RefusesWithAReason) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {{"127.0.0.1", "no port"},
               {"127.0.0.1:", "no port"},
               {":8443", "no host"},
               {"::1:8443", "brackets"},
               {"[::1:8443", "[addr]:port"},
               {"127.0.0.1:http", "not a number"},
               {"127.0.0.1:70000", "out of range"},
               {"127.0.0.1:-1", "not a number"},
               {"my host:80", "characters"}};
  for (const Case& c : cases) {
    try {
      parse_listen_address(c.text);
      ADD_FAILURE() << c.text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << c.text << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace kvgate::config
