#include "gateway/template/lexer.h"

#include <cstdint>

#include "engine/tokenizer/utf8.h"
#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The body of a string literal decoded as Python's "unicode-escape" does
// (Jinja2 decodes literals that way); an unknown escape stays as written.
std::string unescape(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'a': out += '\a'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': break;  // a backslash-newline continues the line
      case 'x':
      case 'u':
      case 'U': {
        const size_t width = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        size_t k = 0;
        for (; k < width && i + 1 + k < body.size() && hex_value(body[i + 1 + k]) >= 0; ++k)
          cp = cp * 16 + static_cast<uint32_t>(hex_value(body[i + 1 + k]));
        if (k != width || cp > 0x10FFFF)
          throw TemplateError(TemplateError::Kind::kSyntax, "truncated \\" + std::string(1, c) + " escape in a string");
        utf8_append(out, cp);
        i += width;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          uint32_t cp = 0;
          size_t k = 0;
          for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k)
            cp = cp * 8 + static_cast<uint32_t>(body[i + k] - '0');
          utf8_append(out, cp);
          i += k - 1;
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  std::vector<Token> run() {
    size_t pos = 0;
    const size_t n = src_.size();
    while (pos < n) {
      size_t start = pos;
      while (true) {
        start = src_.find('{', start);
        if (start == std::string::npos || start + 1 >= n) {
          start = std::string::npos;
          break;
        }
        const char k = src_[start + 1];
        if (k == '{' || k == '%' || k == '#') break;
        ++start;
      }
      if (start == std::string::npos) {
        emit_data(std::string_view(src_).substr(pos), pos);
        break;
      }
      const char kind = src_[start + 1];
      const char mod = start + 2 < n ? src_[start + 2] : '\0';
      std::string_view text = std::string_view(src_).substr(pos, start - pos);
      if (mod == '-') {
        while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
      } else if (mod != '+' && kind != '{') {
        // lstrip_blocks: only spaces and tabs from the line's start.
        const size_t nl = text.rfind('\n');
        const size_t l = nl == std::string_view::npos ? 0 : nl + 1;
        const bool line_starting = l > 0 || pos == 0 || src_[pos - 1] == '\n';
        if (line_starting && text.find_first_not_of(" \t", l) == std::string_view::npos) text = text.substr(0, l);
      }
      emit_data(text, pos);
      size_t p = start + 2 + (mod == '-' || mod == '+' ? 1 : 0);
      if (kind == '#') {
        pos = lex_comment(p, start);
      } else if (kind == '%' && is_raw(p)) {
        pos = lex_raw(p, start);
      } else {
        pos = lex_tag(p, kind == '%', start);
      }
    }
    tokens_.push_back({Token::Type::kEnd, "", line_at(n)});
    return std::move(tokens_);
  }

 private:
  int line_at(size_t pos) {
    for (; line_pos_ < pos && line_pos_ < src_.size(); ++line_pos_)
      if (src_[line_pos_] == '\n') ++line_;
    return line_;
  }

  [[noreturn]] void syntax(const std::string& what, size_t pos) {
    throw TemplateError(TemplateError::Kind::kSyntax, what + " (line " + std::to_string(line_at(pos)) + ")");
  }

  void emit_data(std::string_view text, size_t pos) {
    if (!text.empty()) tokens_.push_back({Token::Type::kData, std::string(text), line_at(pos)});
  }

  // After a tag's closer: `-` strips all whitespace, trim_blocks one newline.
  size_t after_close(size_t p, char mod, bool block) {
    if (mod == '-') {
      while (p < src_.size() && is_space(src_[p])) ++p;
    } else if (block && mod != '+' && p < src_.size() && src_[p] == '\n') {
      ++p;
    }
    return p;
  }

  size_t lex_comment(size_t p, size_t start) {
    const size_t end = src_.find("#}", p);
    if (end == std::string::npos) syntax("missing end of comment tag", start);
    const char mod = end > p && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    return after_close(end + 2, mod, true);
  }

  // `{% raw %}`: everything up to `{% endraw %}` is text.
  bool is_raw(size_t p) {
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    return src_.compare(p, 2, "%}") == 0;
  }

  size_t lex_raw(size_t p, size_t start) {
    const size_t close = src_.find("%}", p);
    const char open_mod = src_[close - 1] == '-' || src_[close - 1] == '+' ? src_[close - 1] : '\0';
    const size_t body = after_close(close + 2, open_mod, true);
    for (size_t q = src_.find("{%", body); q != std::string::npos; q = src_.find("{%", q + 2)) {
      size_t r = q + 2;
      const char mod = r < src_.size() && (src_[r] == '-' || src_[r] == '+') ? src_[r++] : '\0';
      while (r < src_.size() && is_space(src_[r])) ++r;
      if (src_.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      while (r < src_.size() && is_space(src_[r])) ++r;
      const char end_mod = r < src_.size() && (src_[r] == '-' || src_[r] == '+') ? src_[r++] : '\0';
      if (src_.compare(r, 2, "%}") != 0) continue;
      std::string_view text = std::string_view(src_).substr(body, q - body);
      if (mod == '-')
        while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
      emit_data(text, body);
      return after_close(r + 2, end_mod, true);
    }
    syntax("missing end of raw directive", start);
  }

  size_t lex_tag(size_t p, bool block, size_t start) {
    tokens_.push_back({block ? Token::Type::kBlockBegin : Token::Type::kVarBegin, "", line_at(start)});
    int depth = 0;
    const size_t n = src_.size();
    while (true) {
      while (p < n && is_space(src_[p])) ++p;
      if (p >= n)
        syntax(block ? "unexpected end of template: the block tag is not closed"
                     : "unexpected end of template: the variable tag is not closed",
               start);
      if (depth == 0) {
        const char* closer = block ? "%}" : "}}";
        const char c0 = src_[p];
        if ((c0 == '-' || (block && c0 == '+')) && src_.compare(p + 1, 2, closer) == 0) {
          tokens_.push_back({block ? Token::Type::kBlockEnd : Token::Type::kVarEnd, "", line_at(p)});
          return after_close(p + 3, c0, block);
        }
        if (src_.compare(p, 2, closer) == 0) {
          tokens_.push_back({block ? Token::Type::kBlockEnd : Token::Type::kVarEnd, "", line_at(p)});
          return after_close(p + 2, '\0', block);
        }
      }
      p = lex_expression_token(p, depth);
    }
  }

  size_t lex_expression_token(size_t p, int& depth) {
    const size_t n = src_.size();
    const char c = src_[p];
    const int line = line_at(p);
    if (is_name_start(c)) {
      size_t q = p;
      while (q < n && is_name_char(src_[q])) ++q;
      tokens_.push_back({Token::Type::kName, src_.substr(p, q - p), line});
      return q;
    }
    if (is_digit(c)) return lex_number(p, line);
    if (c == '\'' || c == '"') {
      size_t q = p + 1;
      while (q < n && src_[q] != c) q += src_[q] == '\\' ? 2 : 1;
      if (q >= n) syntax("unexpected end of string", p);
      tokens_.push_back({Token::Type::kString, unescape(std::string_view(src_).substr(p + 1, q - p - 1)), line});
      return q + 1;
    }
    static const char* kTwo[] = {"**", "//", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(p, 2, op) == 0) {
        tokens_.push_back({Token::Type::kOperator, op, line});
        return p + 2;
      }
    }
    static const std::string_view kOne = "+-*/%~<>=()[]{},.:|";
    if (kOne.find(c) == std::string_view::npos) syntax("unexpected char '" + std::string(1, c) + "'", p);
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    tokens_.push_back({Token::Type::kOperator, std::string(1, c), line});
    return p + 1;
  }

  // Integers and floats with Python's underscores ("1_000"); a number right
  // after a dot is an integer (`foo.0.1` is two lookups).
  size_t lex_number(size_t p, int line) {
    const size_t n = src_.size();
    auto digits = [&](size_t q) {
      while (q < n && (is_digit(src_[q]) || (src_[q] == '_' && q + 1 < n && is_digit(src_[q + 1])))) ++q;
      return q;
    };
    size_t q = digits(p);
    bool is_float = false;
    const bool after_dot = p > 0 && src_[p - 1] == '.';
    if (!after_dot && q + 1 < n && src_[q] == '.' && is_digit(src_[q + 1])) {
      q = digits(q + 1);
      is_float = true;
    }
    if (!after_dot && q < n && (src_[q] == 'e' || src_[q] == 'E')) {
      size_t r = q + 1;
      if (r < n && (src_[r] == '+' || src_[r] == '-')) ++r;
      if (r < n && is_digit(src_[r])) {
        q = digits(r);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = p; i < q; ++i)
      if (src_[i] != '_') text += src_[i];
    tokens_.push_back({is_float ? Token::Type::kFloat : Token::Type::kInt, text, line});
    return q;
  }

  std::string src_;
  std::vector<Token> tokens_;
  size_t line_pos_ = 0;
  int line_ = 1;
};

// Jinja2 reads the source with every newline as "\n" and drops one at the end.
std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize_newlines(source)).run(); }

}  // namespace kvgate::jinja
