// Feeds arbitrary bytes to the JSON-schema compiler (engine/grammar/) and
// the matcher of what it compiles. The input is a schema's text, a NUL,
// then bytes to feed the matcher. Must hold for any input:
//  - compiling returns a grammar or throws kvgate::Error naming the
//    problem; nothing else is thrown, nothing crashes, no sanitizer report;
//  - the matcher refuses a byte without changing its state, and never
//    dead-ends: after every accepted byte the output can still go on or
//    is complete (generation cannot get stuck);
//  - whenever the bytes read so far are complete, they parse as JSON.
// Schemas that come with requests (response_format, tools) reach this
// compiler, so it is fuzzed as every parser is.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>

#include "base/error.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/matcher.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view schema = input.substr(0, nul);
  const std::string_view output = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  std::shared_ptr<const kvgate::grammar::Grammar> g;
  try {
    g = kvgate::grammar::compile_json_schema(schema);
  } catch (const kvgate::Error&) {
    return 0;
  }
  check(g != nullptr);
  kvgate::grammar::Matcher m(g);
  check(m.can_continue() || m.complete());
  std::string read;
  for (char c : output) {
    if (!m.accept(static_cast<uint8_t>(c))) continue;  // refused: the state is as it was
    read += c;
    check(m.can_continue() || m.complete());
    if (m.complete()) {
      boost::system::error_code ec;
      boost::json::parse(read, ec);
      check(!ec);
    }
  }
  return 0;
}
