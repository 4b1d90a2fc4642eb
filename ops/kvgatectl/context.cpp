#include "ops/kvgatectl/context.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ops/kvgatectl/cli_error.h"

namespace kvgatectl {
namespace {

std::string trimmed(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

bool all_hex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

std::string read_token(const std::string& token_file) {
  std::string token;
  std::string from;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) throw usage_error("--token-file " + token_file + ": cannot read it");
    std::ostringstream s;
    s << in.rdbuf();
    token = trimmed(s.str());
    from = "--token-file " + token_file;
  } else if (const char* env = std::getenv("KVGATE_ADMIN_TOKEN"); env && *env) {
    token = trimmed(env);
    from = "KVGATE_ADMIN_TOKEN";
  } else {
    throw usage_error("no admin token: pass --token-file FILE or set KVGATE_ADMIN_TOKEN (the kvga-... token "
                      "kvgate serve printed at its first start)");
  }
  if (token.empty()) throw usage_error(from + " is empty");
  // The server's own admin-token file holds the token's digest, not the token.
  if (token.size() == 64 && all_hex(token))
    throw usage_error(from + " holds the digest the server keeps (its <data-dir>/admin-token), not the token: "
                      "use the kvga-... token printed at first start");
  return token;
}

}  // namespace

void Context::add_flags(CLI::App& app) {
  app.add_option("--server", server_, "the kvgate server, https://HOST[:PORT]")
      ->type_name("URL")
      ->envname("KVGATE_SERVER")
      ->capture_default_str();
  app.add_option("--token-file", token_file_,
                 "a file holding the admin token (kvga-...); else the KVGATE_ADMIN_TOKEN environment variable")
      ->type_name("FILE");
  app.add_option("--cacert", cacert_,
                 "PEM certificate to verify the server against (a self-signed server's is "
                 "<data-dir>/tls/self-signed.crt); default: the system's trust store")
      ->type_name("FILE")
      ->envname("KVGATE_CACERT");
  app.add_flag("--insecure", insecure_,
               "do not verify the server's certificate at all (anyone on the path can then read the token)");
  app.add_flag("--json", json_, "print the server's JSON answer (one line) instead of tables");
  app.add_option("--timeout", timeout_s_, "seconds to wait for each step of a request")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
}

const AdminClient& Context::admin() {
  if (!admin_) {
    ServerUrl url = parse_server_url(server_);
    const std::string token = read_token(token_file_);
    HttpsClient http(std::move(url), TlsTrust{cacert_, insecure_},
                     std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000)));
    admin_ = std::make_unique<AdminClient>(std::move(http), token);
  }
  return *admin_;
}

}  // namespace kvgatectl
