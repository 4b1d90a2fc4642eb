// Tokens to a statement tree, with Jinja2's grammar and operator
// precedence (loosest first): `x if c else y`, or, and, not, comparisons
// (chained, with in / not in), + -, ~, * / // %, **, unary - +, then
// postfix .attr [index] [a:b] (call), and | filter and `is` test chains.
//
// Tags: if/elif/else, for (unpacking, `if` filter, else, recursive), set
// (also ns.attr and the block form), macro, call, filter, with, raw, break and
// continue (Hugging Face loads the loopcontrols extension). Any other tag
// (include, import, extends, block, `generation`) is refused as Jinja2
// refuses a tag it does not know: a template is a string, with no files.
//
// Nesting deeper than kMaxNesting (brackets, operators, blocks) is a
// syntax error, so neither parsing nor rendering can exhaust the stack.
#pragma once

#include <string_view>

#include "gateway/template/ast.h"

namespace kvgate::jinja {

inline constexpr int kMaxNesting = 100;

// Throws TemplateError (kSyntax), its message naming the line.
Body parse(std::string_view source);

}  // namespace kvgate::jinja
