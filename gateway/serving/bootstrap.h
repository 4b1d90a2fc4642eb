// First start of `kvgate serve` on an empty data directory: a demo price
// plan, a demo tenant with one API key, and the admin token. Their
// plaintexts are returned once, to be printed once; the store and the token
// file keep digests only, so a later start has nothing to show.
#pragma once

#include <optional>
#include <string>

#include "tenancy/tenancy.h"

namespace kvgate::serving {

inline constexpr const char* kDemoTenant = "demo";
inline constexpr const char* kDemoPlan = "demo";

struct FirstStartSecrets {
  std::optional<std::string> demo_key;     // set when the demo tenant was created now
  std::optional<std::string> admin_token;  // set when the admin token was created now
};

// Whether bootstrap() would make a secret now (nothing is written): the
// store has no tenant, or the admin token file is missing.
bool secrets_pending(tenancy::Tenancy& tenancy, const std::string& admin_token_file);

// Creates what is missing: the demo plan, tenant and key only when the store
// has no tenant at all; the admin token when its digest file (at
// `admin_token_file`, the config's admin.token_file) is missing.
FirstStartSecrets bootstrap(tenancy::Tenancy& tenancy, const std::string& admin_token_file);

}  // namespace kvgate::serving
