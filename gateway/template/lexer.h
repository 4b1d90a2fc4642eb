// Template text to tokens, with Jinja2's whitespace rules as Hugging Face
// configures them (trim_blocks, lstrip_blocks, keep_trailing_newline off):
//
//  - `{%-`, `{{-`, `{#-` strip all whitespace before the tag; `-%}`, `-}}`,
//    `-#}` all whitespace after it.
//  - lstrip_blocks: spaces and tabs between a line's start and a `{%` or
//    `{#` are dropped (not before `{{`, and not when `{%+` asks).
//  - trim_blocks: the first newline after `%}` or `#}` is dropped (not
//    after `}}`, and not when `+%}` asks).
//  - One newline at the very end of the template is dropped, and newlines
//    in the text are written as "\n".
//
// A tag ends at its closer only when its brackets are balanced, so
// `{{ {'a': 1}}}` is one expression, as in Jinja2.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvgate::jinja {

struct Token {
  enum class Type {
    kData,        // template text, already whitespace-controlled
    kVarBegin,    // {{
    kVarEnd,      // }}
    kBlockBegin,  // {%
    kBlockEnd,    // %}
    kName,
    kString,  // text: the decoded value
    kInt,
    kFloat,
    kOperator,  // text: "+", "==", "(", ...
    kEnd,
  };
  Type type;
  std::string text;
  int line;
};

// Throws TemplateError (kSyntax) on an unclosed tag, comment or string.
std::vector<Token> tokenize(std::string_view source);

}  // namespace kvgate::jinja
