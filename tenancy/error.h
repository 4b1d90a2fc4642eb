// The one exception type tenancy/ throws: a code the gateway can map to an
// HTTP status, and a message that names what is wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace kvgate::tenancy {

enum class ErrorCode {
  kInvalidArgument,    // malformed id, bad key format, bad field value
  kNotFound,           // tenant, plan, key or ticket does not exist
  kAlreadyExists,      // tenant or plan id taken
  kSchemaTooNew,       // the store was written by a newer kvgate
  kCorrupt,            // a stored record does not decode
  kIo,                 // RocksDB or the file system failed
  kOverflow,           // a cost does not fit in 64-bit micro-units
  kInvariantViolated,  // e.g. prompt_tokens != cached + fresh
};

const char* error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(std::string(error_code_name(code)) + ": " + message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

inline const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kAlreadyExists: return "already exists";
    case ErrorCode::kSchemaTooNew: return "schema too new";
    case ErrorCode::kCorrupt: return "corrupt record";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kOverflow: return "overflow";
    case ErrorCode::kInvariantViolated: return "invariant violated";
  }
  return "unknown error";
}

}  // namespace kvgate::tenancy
