// Self-signed certificate generation and reuse with OpenSSL 3's API.
#include "gateway/server/self_signed_cert.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include "base/error.h"
#include "gateway/server/openssl_error.h"

namespace kvgate::server {

namespace {

namespace fs = std::filesystem;

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using CertPtr = std::unique_ptr<X509, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;

constexpr long kValiditySeconds = 365L * 24 * 60 * 60;

[[noreturn]] void fail(const std::string& what) { throw Error("TLS certificate: " + what + ": " + openssl_reason()); }

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail(std::string("cannot add extension ") + value);
}

CertPtr make_certificate(EVP_PKEY* key) {
  CertPtr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) fail("cannot make a certificate");

  // A random 159-bit serial: positive, and unique enough that a browser
  // never sees two certificates of one issuer with the same serial.
  std::unique_ptr<BIGNUM, Free> serial(BN_new());
  if (!serial || BN_rand(serial.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())))
    fail("cannot draw a serial number");

  if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValiditySeconds))
    fail("cannot set the validity");
  if (X509_set_pubkey(cert.get(), key) != 1) fail("cannot set the public key");

  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1,
                                 -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1)
    fail("cannot set the name");

  // A leaf, not a CA: clients trust it directly (pinned, or as their CA
  // file); the key identifiers let OpenSSL see it as self-signed.
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), NID_authority_key_identifier, "keyid:always");
  add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");

  if (X509_sign(cert.get(), key, EVP_sha256()) <= 0) fail("cannot sign the certificate");
  return cert;
}

std::string bio_contents(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

// Writes `bytes` to `path` through a synced temporary file and a rename.
void write_file_atomically(const fs::path& path, const std::string& bytes, mode_t mode) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw Error("TLS certificate: cannot create " + tmp.string() + ": " + std::strerror(errno));
  bool ok = ::fchmod(fd, mode) == 0;  // the umask must not widen or narrow it
  for (size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : saved;
    ::unlink(tmp.c_str());
    throw Error("TLS certificate: cannot write " + path.string() + ": " + std::strerror(err));
  }
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string fingerprint_of(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha256(), md, &n) != 1) fail("cannot hash the certificate");
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    if (i) out += ':';
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

CertPtr read_certificate(const fs::path& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) fail("cannot open " + path.string());
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) fail(path.string() + " holds no PEM certificate");
  return cert;
}

KeyPtr read_key(const fs::path& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) fail("cannot open " + path.string());
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail(path.string() + " holds no PEM private key");
  return key;
}

bool expired(X509* cert) { return X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0; }

CertificateInfo generate(const fs::path& dir, const fs::path& cert_file, const fs::path& key_file) {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) fail("cannot generate an EC P-256 key");
  CertPtr cert = make_certificate(key.get());

  BioPtr key_pem(BIO_new(BIO_s_mem()));
  BioPtr cert_pem(BIO_new(BIO_s_mem()));
  if (!key_pem || !cert_pem || PEM_write_bio_PrivateKey(key_pem.get(), key.get(), nullptr, nullptr, 0, nullptr,
                                                        nullptr) != 1 ||
      PEM_write_bio_X509(cert_pem.get(), cert.get()) != 1)
    fail("cannot encode PEM");

  // The key first: a crash between the renames leaves no certificate,
  // which the next start regenerates.
  write_file_atomically(key_file, bio_contents(key_pem.get()), 0600);
  write_file_atomically(cert_file, bio_contents(cert_pem.get()), 0644);
  sync_directory(dir);
  return {cert_file, key_file, fingerprint_of(cert.get()), true};
}

}  // namespace

std::string certificate_fingerprint(const fs::path& cert_pem) {
  ERR_clear_error();
  CertPtr cert = read_certificate(cert_pem);
  return fingerprint_of(cert.get());
}

CertificateInfo ensure_self_signed_certificate(const fs::path& dir) {
  ERR_clear_error();
  if (dir.empty()) throw Error("TLS certificate: no directory for the self-signed certificate");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("TLS certificate: cannot create " + dir.string() + ": " + ec.message());

  const fs::path cert_file = dir / "self-signed.crt";
  const fs::path key_file = dir / "self-signed.key";
  if (!fs::exists(cert_file) || !fs::exists(key_file)) return generate(dir, cert_file, key_file);

  CertPtr cert = read_certificate(cert_file);
  KeyPtr key = read_key(key_file);
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    fail(key_file.string() + " is not the key of " + cert_file.string());
  if (expired(cert.get())) return generate(dir, cert_file, key_file);
  return {cert_file, key_file, fingerprint_of(cert.get()), false};
}

}  // namespace kvgate::server
