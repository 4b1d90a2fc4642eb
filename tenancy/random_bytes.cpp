// Keys and cache scopes are secrets: a predictable scope would let one tenant
// compute another's block hashes, so failure to get entropy is fatal here.
#include "tenancy/random_bytes.h"

#include <openssl/rand.h>

#include "tenancy/error.h"

namespace kvgate::tenancy {

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    throw Error(ErrorCode::kIo, "RAND_bytes failed to produce " + std::to_string(n) + " bytes");
  }
  return out;
}

}  // namespace kvgate::tenancy
