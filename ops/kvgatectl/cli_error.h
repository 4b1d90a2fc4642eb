// The errors kvgatectl ends with, each carrying its exit status:
//   1  the server said no (a 4xx or 5xx answer other than 401/403)
//   2  a usage error (a bad flag, a missing token, an unreadable file)
//   3  no answer: cannot resolve or connect, TLS failure, timeout
//   4  the admin token was refused (401 or 403)
// main() prints what() as "kvgatectl: error: ..." on stderr and exits with
// exit_code().
#pragma once

#include <stdexcept>
#include <string>

namespace kvgatectl {

enum ExitCode : int { kOk = 0, kRefused = 1, kUsage = 2, kUnreachable = 3, kBadToken = 4 };

class CliError : public std::runtime_error {
 public:
  CliError(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode exit_code() const { return code_; }

 private:
  ExitCode code_;
};

inline CliError usage_error(const std::string& m) { return CliError(kUsage, m); }
inline CliError refused(const std::string& m) { return CliError(kRefused, m); }
inline CliError unreachable(const std::string& m) { return CliError(kUnreachable, m); }
inline CliError bad_token(const std::string& m) { return CliError(kBadToken, m); }

}  // namespace kvgatectl
