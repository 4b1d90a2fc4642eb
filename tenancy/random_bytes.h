// Cryptographically secure random bytes (OpenSSL RAND_bytes); throws
// Error(kIo) if the generator cannot be seeded rather than return weak bytes.
#pragma once

#include <cstddef>
#include <string>

namespace kvgate::tenancy {

std::string random_bytes(size_t n);

}  // namespace kvgate::tenancy
