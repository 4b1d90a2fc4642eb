// OpenSSL settings behind make_tls_context (see tls_context.h for why).
#include "gateway/server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstring>
#include <string>

#include "base/error.h"
#include "base/private_file.h"
#include "gateway/server/openssl_error.h"

namespace kvgate::server {

namespace {

namespace ssl = boost::asio::ssl;

// ALPN: we speak HTTP/1.1 only. A client that offers it gets it; one that
// offers only other protocols gets no ALPN answer and may still go on.
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
                void*) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace

std::unique_ptr<ssl::context> make_tls_context(const std::filesystem::path& cert_chain_file,
                                               const std::filesystem::path& key_file) {
  ERR_clear_error();
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* h = ctx->native_handle();
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                   ssl::context::single_dh_use);
  SSL_CTX_set_options(h, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(h, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(h, kTls12Ciphers) != 1 || SSL_CTX_set1_groups_list(h, "X25519:P-256:P-384") != 1)
    throw Error("TLS: cannot configure protocols and ciphers: " + openssl_reason());
  SSL_CTX_set_alpn_select_cb(h, select_alpn, nullptr);

  if (SSL_CTX_use_certificate_chain_file(h, cert_chain_file.c_str()) != 1)
    throw Error("TLS: cannot load the certificate chain " + cert_chain_file.string() + ": " + openssl_reason());
  require_private_file(key_file.string(), "the TLS private key");
  if (SSL_CTX_use_PrivateKey_file(h, key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    throw Error("TLS: cannot load the private key " + key_file.string() + ": " + openssl_reason());
  if (SSL_CTX_check_private_key(h) != 1)
    throw Error("TLS: " + key_file.string() + " is not the key of " + cert_chain_file.string() + ": " +
                openssl_reason());
  return ctx;
}

}  // namespace kvgate::server
