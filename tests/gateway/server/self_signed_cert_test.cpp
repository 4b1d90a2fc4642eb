// The self-signed certificate: made once with the right names, key and
// validity, reused with the same fingerprint, regenerated when half of it
// is missing, and never overwritten when it is not ours to judge.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "base/error.h"
#include "gateway/server/self_signed_cert.h"
#include "tests/temp_dir.h"

namespace kvgate::server {
namespace {

using kvgate::testing::TempDir;

std::unique_ptr<X509, decltype(&X509_free)> load(const std::filesystem::path& p) {
  FILE* f = std::fopen(p.c_str(), "r");
  X509* x = f ? PEM_read_X509(f, nullptr, nullptr, nullptr) : nullptr;
  if (f) std::fclose(f);
  return {x, &X509_free};
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(SelfSignedCert, MadeOnceThenReused) {
  TempDir dir;
  const CertificateInfo first = ensure_self_signed_certificate(dir.path() / "tls");
  EXPECT_TRUE(first.generated);
  EXPECT_EQ(first.sha256_fingerprint.size(), 32u * 3 - 1);  // 32 hex pairs, 31 colons
  EXPECT_EQ(first.sha256_fingerprint, certificate_fingerprint(first.cert_file));

  struct stat st {};
  ASSERT_EQ(::stat(first.key_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const CertificateInfo second = ensure_self_signed_certificate(dir.path() / "tls");
  EXPECT_FALSE(second.generated);
  EXPECT_EQ(second.sha256_fingerprint, first.sha256_fingerprint);
}

TEST(SelfSignedCert, NamesKeyAndValidity) {
  TempDir dir;
  const CertificateInfo info = ensure_self_signed_certificate(dir.path());
  auto cert = load(info.cert_file);
  ASSERT_TRUE(cert);

  char cn[64] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
  EXPECT_STREQ(cn, "localhost");
  EXPECT_EQ(X509_check_host(cert.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "127.0.0.1", 0), 1);
  EXPECT_NE(X509_check_host(cert.get(), "example.com", 0, 0, nullptr), 1);

  EVP_PKEY* key = X509_get0_pubkey(cert.get());
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
  char group[32] = {};
  size_t len = 0;
  EVP_PKEY_get_group_name(key, group, sizeof group, &len);
  EXPECT_STREQ(group, "prime256v1");

  int days = 0, secs = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(cert.get()), X509_get0_notAfter(cert.get())), 1);
  EXPECT_EQ(days, 365);
  EXPECT_EQ(X509_check_ca(cert.get()), 0);  // a leaf
}

#ifdef KVGATE_OPENSSL
TEST(SelfSignedCert, FingerprintMatchesTheOpensslTool) {
  TempDir dir;
  const CertificateInfo info = ensure_self_signed_certificate(dir.path());
  const std::string out =
      run(std::string(KVGATE_OPENSSL) + " x509 -noout -fingerprint -sha256 -in " + info.cert_file.string());
  // "sha256 Fingerprint=AB:CD:...\n" (the prefix's case varies by version).
  const size_t eq = out.find('=');
  ASSERT_NE(eq, std::string::npos) << out;
  EXPECT_EQ(out.substr(eq + 1, info.sha256_fingerprint.size()), info.sha256_fingerprint);
  // The tool verifies it as a self-signed certificate for localhost.
  const std::string verify = run(std::string(KVGATE_OPENSSL) + " verify -CAfile " + info.cert_file.string() +
                                 " -verify_hostname localhost " + info.cert_file.string() + " 2>&1");
  EXPECT_NE(verify.find(": OK"), std::string::npos) << verify;
}
#endif

TEST(SelfSignedCert, HalfAPairIsRegenerated) {
  TempDir dir;
  const CertificateInfo first = ensure_self_signed_certificate(dir.path());
  std::filesystem::remove(first.cert_file);
  const CertificateInfo second = ensure_self_signed_certificate(dir.path());
  EXPECT_TRUE(second.generated);
  EXPECT_NE(second.sha256_fingerprint, first.sha256_fingerprint);
}

TEST(SelfSignedCert, MismatchedOrBrokenFilesAreErrorsNotOverwritten) {
  TempDir a, b;
  const CertificateInfo ia = ensure_self_signed_certificate(a.path());
  const CertificateInfo ib = ensure_self_signed_certificate(b.path());
  std::filesystem::copy_file(ib.key_file, ia.key_file, std::filesystem::copy_options::overwrite_existing);
  EXPECT_THROW(ensure_self_signed_certificate(a.path()), Error);
  EXPECT_EQ(certificate_fingerprint(ia.cert_file), ia.sha256_fingerprint);  // left alone

  std::ofstream(ib.cert_file) << "not a certificate";
  try {
    ensure_self_signed_certificate(b.path());
    FAIL() << "a broken certificate must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("self-signed.crt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvgate::server
