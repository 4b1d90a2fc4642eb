// openssl_reason(): OpenSSL's queued error reasons, oldest first, joined
// by "; ", emptying the queue, so an error message can say why a call
// failed. Reads the calling thread's OpenSSL error queue only.
#pragma once

#include <openssl/err.h>

#include <string>

namespace kvgate::server {

inline std::string openssl_reason() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

}  // namespace kvgate::server
