// A grammar described as JSON: the one form in which a request's output
// constraint is built by the gateway, cached (by its canonical text) and
// sent to a replica, which compiles the same grammar from it.
//
//   {"json_schema": S}      the compact JSON texts valid under schema S (json_schema.h)
//   {"json_object": {}}     any JSON object (response_format json_object)
//   {"literal": "text"}     exactly "text"
//   {"sequence": [G, ...]}  each grammar in turn (a tool call: markup, arguments, markup)
//   {"choice": [G, ...]}    any one of them (a call to any of the functions offered)
//
// Anything else is refused with a kvgate::Error naming it.
#pragma once

#include <memory>

#include <boost/json/value.hpp>

#include "engine/grammar/grammar.h"
#include "engine/grammar/json_schema.h"

namespace kvgate::grammar {

std::shared_ptr<const Grammar> compile_spec(const boost::json::value& spec, const SchemaCaps& caps = {});

}  // namespace kvgate::grammar
