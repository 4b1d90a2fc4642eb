// The live server's TLS: the self-signed certificate made once and reused,
// configured certificate files, bad options as clear errors, protocols and
// ciphers served and refused, ALPN, the plain listener only when enabled,
// several I/O threads, and curl verifying the certificate. The fixture is
// server_fixture.h.
#include <gtest/gtest.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>
#include <thread>

#include "base/error.h"
#include "gateway/server/server.h"
#include "gateway/server/sse.h"
#include "tests/gateway/server/server_fixture.h"

namespace kvgate::server {
namespace {

using namespace std::chrono_literals;
using namespace kvgate::server::testing;

// ---- TLS ------------------------------------------------------------------

std::string peer_fingerprint(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(cert, EVP_sha256(), md, &n);
  X509_free(cert);
  std::string out;
  char hex[4];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(hex, sizeof hex, i ? ":%02X" : "%02X", md[i]);
    out += hex;
  }
  return out;
}

TEST_F(ServerTest, SelfSignedCertificateIsMadeOnceAndReusedAcrossStarts) {
  start();
  const CertificateInfo first = *server_->certificate();
  EXPECT_TRUE(first.generated);
  EXPECT_NE(server_->describe().find(first.sha256_fingerprint), std::string::npos) << server_->describe();
  {
    TestClient c(tls());
    ASSERT_FALSE(c.open(port()));
    EXPECT_EQ(peer_fingerprint(c.ssl_handle()), first.sha256_fingerprint);
  }
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  server_->stop(5s);
  server_.reset();

  start();  // a second start in the same directory
  EXPECT_FALSE(server_->certificate()->generated);
  EXPECT_EQ(server_->certificate()->sha256_fingerprint, first.sha256_fingerprint);
  TestClient c(tls());
  ASSERT_FALSE(c.open(port()));
  EXPECT_EQ(peer_fingerprint(c.ssl_handle()), first.sha256_fingerprint);
  ASSERT_TRUE(c.request("GET", "/"));
}

TEST_F(ServerTest, ConfiguredCertificateFilesAreUsed) {
  const CertificateInfo made = ensure_self_signed_certificate(dir_.path() / "operator");
  ServerOptions o = options();
  o.tls.cert_file = made.cert_file;
  o.tls.key_file = made.key_file;
  o.tls.self_signed_dir.clear();
  start(o);
  EXPECT_EQ(server_->certificate()->sha256_fingerprint, made.sha256_fingerprint);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "tls"));
  TestClient c({made.cert_file});
  ASSERT_FALSE(c.open(port()));
  ASSERT_TRUE(c.request("GET", "/"));
}

TEST_F(ServerTest, BadOptionsAndTlsFilesAreClearErrors) {
  ServerOptions o = options();
  o.tls.cert_file = dir_.path() / "missing.crt";
  o.tls.key_file = dir_.path() / "missing.key";
  EXPECT_THROW(Server(o, echo), Error);
  ServerOptions none = options();
  none.https = false;
  EXPECT_THROW(Server(none, echo), Error);
  ServerOptions half = options();
  half.tls.cert_file = "only-the-cert.pem";
  EXPECT_THROW(Server(half, echo), Error);
  ServerOptions bad_address = options();
  bad_address.address = "not-an-address";
  EXPECT_THROW(Server(bad_address, echo), Error);
  // A private key every user can read is refused, naming the fix.
  const CertificateInfo made = ensure_self_signed_certificate(dir_.path() / "operator");
  std::filesystem::permissions(made.key_file, std::filesystem::perms::others_read, std::filesystem::perm_options::add);
  ServerOptions open_key = options();
  open_key.tls.cert_file = made.cert_file;
  open_key.tls.key_file = made.key_file;
  open_key.tls.self_signed_dir.clear();
  try {
    Server s(open_key, echo);
    ADD_FAILURE() << "a world-readable key was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
  }
}

TEST_F(ServerTest, BusyPortIsAnError) {
  start();
  ServerOptions o = options();
  o.https_port = port();
  try {
    Server second(o, echo);
    FAIL() << "binding a busy port must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(port())), std::string::npos) << e.what();
  }
}

TEST_F(ServerTest, Tls12WithEcdheAeadAndTls13AreServed) {
  start();
  TestClient v12({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"});
  ASSERT_FALSE(v12.open(port()));
  EXPECT_STREQ(SSL_get_version(v12.ssl_handle()), "TLSv1.2");
  EXPECT_STREQ(SSL_get_cipher_name(v12.ssl_handle()), "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_EQ(SSL_get_current_compression(v12.ssl_handle()), nullptr);
  ASSERT_TRUE(v12.request("GET", "/"));

  TestClient chacha(
      {server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"});
  ASSERT_FALSE(chacha.open(port()));

  TestClient v13({server_->certificate()->cert_file, TLS1_3_VERSION});
  ASSERT_FALSE(v13.open(port()));
  EXPECT_STREQ(SSL_get_version(v13.ssl_handle()), "TLSv1.3");
  ASSERT_TRUE(v13.request("GET", "/"));
}

TEST_F(ServerTest, OldProtocolsAndWeakCiphersAreRefused) {
  start();
  TestClient v11({server_->certificate()->cert_file, TLS1_1_VERSION, TLS1_1_VERSION});
  EXPECT_TRUE(v11.open(port()));
  TestClient cbc({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"});
  EXPECT_TRUE(cbc.open(port()));
  TestClient rsa_kx({server_->certificate()->cert_file, TLS1_2_VERSION, TLS1_2_VERSION, "AES128-GCM-SHA256"});
  EXPECT_TRUE(rsa_kx.open(port()));
  // The client sees the alert before the server's session has counted it.
  EXPECT_TRUE(eventually([&] { return server_->stats().tls_handshake_failures >= 3; }));
  EXPECT_EQ(server_->stats().tls_handshake_failures, 3u);
}

TEST_F(ServerTest, AlpnSettlesOnHttp11) {
  start();
  TestClient c(tls());
  static const unsigned char kOffer[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_set_alpn_protos(c.ssl_handle(), kOffer, sizeof kOffer);
  ASSERT_FALSE(c.open(port()));
  const unsigned char* proto = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(c.ssl_handle(), &proto, &len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(proto), len), "http/1.1");
}

TEST_F(ServerTest, PlainHttpListenerOnlyWhenEnabled) {
  start();
  EXPECT_FALSE(server_->http_port());
  server_->stop(5s);
  server_.reset();

  ServerOptions o = options();
  o.http_port = 0;
  start(o);
  ASSERT_TRUE(server_->http_port());
  TestClient plain;
  ASSERT_FALSE(plain.connect(*server_->http_port()));
  auto r = plain.request("GET", "/x");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body(), "GET /x 0 plain");
  TestClient secure(tls());
  ASSERT_FALSE(secure.open(port()));
  auto s = secure.request("GET", "/y");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->body(), "GET /y 0 tls");
}

TEST_F(ServerTest, SeveralIoThreadsServeManyConnections) {
  ServerOptions o = options();
  o.io_threads = 3;
  start(o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      TestClient c(tls());
      if (c.open(port())) return;
      for (int i = 0; i < 10; ++i) {
        auto r = c.request("POST", "/n", std::string(static_cast<size_t>(i) * 100, 'z'));
        if (r && r->result_int() == 200 && r->body() == "POST /n " + std::to_string(i * 100) + " tls") ++ok;
        else std::fprintf(stderr, "request %d failed: %s\n", i, r ? r->body().c_str() : "no response");
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 60);
}

// ---- curl -----------------------------------------------------------------

#ifdef KVGATE_CURL
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST_F(ServerTest, CurlVerifiesTheCertificateAndReusesTheConnection) {
  handler_ = [](HttpRequest req, Reply reply) {
    if (req.path() == "/stream") {
      reply.start_stream(200, sse_headers());
      reply.write(sse_data("{\"n\":1}"));
      reply.write(sse_data("{\"n\":2}"));
      reply.write(std::string(kSseDone));
      reply.finish();
      return;
    }
    echo(std::move(req), reply);
  };
  start();
  const std::string p = std::to_string(port());
  const std::string base = std::string(KVGATE_CURL) + " -sS --max-time 20 --cacert " +
                           server_->certificate()->cert_file.string() + " --resolve localhost:" + p + ":127.0.0.1 ";
  const std::string url = "https://localhost:" + p;
  // Two URLs in one run: curl keeps the connection alive between them.
  EXPECT_EQ(run(base + "-d hello " + url + "/v1/a " + url + "/v1/b 2>&1"), "POST /v1/a 5 tlsPOST /v1/b 5 tls");
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(run(base + "-N " + url + "/stream 2>&1"), "data: {\"n\":1}\n\ndata: {\"n\":2}\n\ndata: [DONE]\n\n");
  // A body over the limit, sent as curl sends big bodies (Expect: 100-continue).
  const std::string big = (dir_.path() / "big.bin").string();
  run("head -c 5000000 /dev/zero > " + big);
  EXPECT_EQ(run(base + "-o /dev/null -w '%{http_code}' --data-binary @" + big + " " + url + "/v1/big 2>&1"), "413");
  // Without the certificate, curl refuses the server.
  EXPECT_NE(run(std::string(KVGATE_CURL) + " -sS --max-time 20 --resolve localhost:" + p + ":127.0.0.1 " + url +
                "/ 2>&1")
                .find("certificate"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace kvgate::server
