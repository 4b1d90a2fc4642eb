// The self-signed certificate `kvgate serve` uses when none is configured:
// an EC P-256 key and a certificate for CN=localhost with the subject
// alternative names DNS:localhost and IP:127.0.0.1, valid for one year,
// made with the OpenSSL API (no shell-out) the first time and reused on
// every later start, so clients that pinned it keep trusting it.
//
// Files: <dir>/self-signed.key (PKCS#8 PEM, mode 0600) and
// <dir>/self-signed.crt.
// Each is written to a temporary name, synced and renamed, so a crash
// leaves either both or a pair that is regenerated. Regenerated when
// either file is missing or the certificate has expired; an unreadable
// or mismatched pair is an error (it may be an operator's), never
// overwritten.
//
// No state; not for concurrent use on one directory.
#pragma once

#include <filesystem>
#include <string>

namespace kvgate::server {

struct CertificateInfo {
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  // SHA-256 of the leaf certificate's DER, as `openssl x509 -fingerprint
  // -sha256` prints it: upper-case hex pairs joined by colons.
  std::string sha256_fingerprint;
  bool generated = false;  // made by this call (else reused)
};

// Throws kvgate::Error naming the file and OpenSSL's reason on failure.
CertificateInfo ensure_self_signed_certificate(const std::filesystem::path& dir);

// The fingerprint of the first certificate in a PEM file.
std::string certificate_fingerprint(const std::filesystem::path& cert_pem);

}  // namespace kvgate::server
