// The URL forms the client accepts (bench-serve's --url, the front's
// replicas), and the ones it refuses.
#include <gtest/gtest.h>

#include "base/error.h"
#include "gateway/client/https_target.h"

namespace kvgate::client {
namespace {

TEST(HttpsTarget, HostPortAndHostHeader) {
  HttpsTarget t = parse_https_url("https://127.0.0.1:8443");
  EXPECT_EQ(t.host, "127.0.0.1");
  EXPECT_EQ(t.port, "8443");
  EXPECT_EQ(t.host_header, "127.0.0.1:8443");
  t = parse_https_url("https://localhost/");
  EXPECT_EQ(t.port, "443");
  EXPECT_EQ(t.host_header, "localhost");
  t = parse_https_url("https://[::1]:9000");
  EXPECT_EQ(t.host, "::1");
  EXPECT_EQ(t.host_header, "[::1]:9000");
}

TEST(HttpsTarget, RefusesWhatItCannotServe) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://127.0.0.1:8080", "--url http://127.0.0.1:8080: expected https://HOST:PORT"},
      {"https://127.0.0.1:8443/v1", "--url https://127.0.0.1:8443/v1: give the server's root, without a path"},
      {"https://:8443", "--url https://:8443: no host"},
      {"https://h:0", "--url https://h:0: the port must be a number from 1 to 65535"},
      {"https://h:99999", "--url https://h:99999: the port must be a number from 1 to 65535"},
      {"https://h:x", "--url https://h:x: the port must be a number from 1 to 65535"},
      {"https://[::1", "--url https://[::1: unclosed [ in the host"},
  };
  for (const auto& [url, message] : cases) {
    try {
      parse_https_url(url);
      ADD_FAILURE() << url;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
  }
}

TEST(HttpsTarget, AnErrorNamesWhereTheUrlCameFrom) {
  try {
    parse_https_url("http://10.0.0.2:8443", "--replica");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--replica http://10.0.0.2:8443: expected https://HOST:PORT (HTTPS only)");
  }
}

}  // namespace
}  // namespace kvgate::client
