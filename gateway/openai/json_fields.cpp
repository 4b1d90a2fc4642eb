// The shared field reader with OpenAI's errors. Pure; any thread.
#include "gateway/openai/json_fields.h"

#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace {

class ApiFieldErrors final : public json_fields::FieldErrors {
 public:
  [[noreturn]] void missing(const std::string& path) const override { throw missing_parameter(path); }
  [[noreturn]] void wrong_type(const std::string& path, std::string_view expected,
                               std::string_view got) const override {
    throw invalid_type(path, expected, got);
  }
  [[noreturn]] void bad_value(const std::string& path, std::string_view why) const override {
    throw invalid_value(path, why);
  }
};

constinit const ApiFieldErrors kApiFieldErrors;

}  // namespace

FieldReader::FieldReader(const boost::json::object& object, std::string prefix)
    : json_fields::FieldReader(object, std::move(prefix), kApiFieldErrors, json_fields::Convention::kApi) {}

}  // namespace kvgate::openai
