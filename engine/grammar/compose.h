// Grammars built from grammars: an output that is literal text around a
// JSON value (a tool call in a model family's syntax, `<tool_call>{...}`),
// or one of several such outputs (one per function a call may name). The
// parts are copied into one new Grammar, so the result shares nothing with
// its inputs and is as fast to match as a compiled schema.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"

namespace kvgate::grammar {

// Literal text, or (when `grammar` is set) a whole grammar's language.
struct Part {
  std::string literal;
  std::shared_ptr<const Grammar> grammar;
};

// The parts in order. Throws kvgate::Error if `parts` is empty.
std::shared_ptr<const Grammar> sequence(const std::vector<Part>& parts);
// Any one of `choices`. Throws kvgate::Error if `choices` is empty.
std::shared_ptr<const Grammar> choice(const std::vector<std::shared_ptr<const Grammar>>& choices);

}  // namespace kvgate::grammar
