#include "gateway/template/parser.h"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "gateway/template/lexer.h"
#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

using T = Token::Type;

Op op_of(std::string_view op) {
  static const std::pair<std::string_view, Op> kOps[] = {
      {"and", Op::kAnd},  {"or", Op::kOr}, {"not", Op::kNot},     {"+", Op::kAdd},      {"-", Op::kSub},
      {"*", Op::kMul},    {"/", Op::kDiv}, {"//", Op::kFloorDiv}, {"%", Op::kMod},      {"**", Op::kPow},
      {"~", Op::kConcat}, {"==", Op::kEq}, {"!=", Op::kNe},       {"<", Op::kLt},       {"<=", Op::kLe},
      {">", Op::kGt},     {">=", Op::kGe}, {"in", Op::kIn},       {"notin", Op::kNotIn}};
  for (const auto& [text, o] : kOps)
    if (text == op) return o;
  return Op::kNone;
}

ExprPtr make_expr(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Body parse_all() {
    Body body = subparse({});
    if (peek().type != T::kEnd) syntax("unexpected tag");
    return body;
  }

 private:
  // --- token access ---
  const Token& peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  bool is_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).type == T::kOperator && peek(ahead).text == op;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).type == T::kName && peek(ahead).text == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) syntax("expected '" + std::string(op) + "'");
  }
  std::string expect_name() {
    if (peek().type != T::kName) syntax("expected a name");
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != T::kBlockEnd) syntax("expected the end of the block tag");
    next();
  }

  [[noreturn]] void syntax(const std::string& what, bool name_token = true) const {
    const Token& t = peek();
    if (!name_token) throw TemplateError(TemplateError::Kind::kSyntax, what + " (line " + std::to_string(t.line) + ")");
    std::string got;
    switch (t.type) {
      case T::kEnd: got = "end of template"; break;
      case T::kData: got = "text"; break;
      case T::kBlockEnd: got = "'%}'"; break;
      case T::kVarEnd: got = "'}}'"; break;
      case T::kBlockBegin: got = "'{%'"; break;
      case T::kVarBegin: got = "'{{'"; break;
      default: got = "'" + t.text + "'";
    }
    throw TemplateError(TemplateError::Kind::kSyntax, what + ", got " + got + " (line " + std::to_string(t.line) + ")");
  }

  struct Nest {
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting)
        p_.syntax("the template nests deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ~Nest() { --p_.depth_; }
    Parser& p_;
  };

  // --- statements ---

  // Statements until a block tag whose name is one of `ends` (left unread:
  // the caller reads the tag), or the end of the template when `ends` is empty.
  Body subparse(std::initializer_list<std::string_view> ends) {
    Nest nest(*this);
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.type == T::kEnd) {
        if (ends.size() != 0) syntax("unexpected end of template: a block is not closed");
        return body;
      }
      if (t.type == T::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
        continue;
      }
      if (t.type == T::kVarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = t.line;
        s->expr = parse_tuple(true);
        if (peek().type != T::kVarEnd) syntax("expected the end of the print tag");
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (t.type != T::kBlockBegin) syntax("unexpected token");
      if (peek(1).type == T::kName)
        for (std::string_view end : ends)
          if (peek(1).text == end) return body;
      next();
      body.push_back(parse_statement());
    }
  }

  // The closing tag of a block: {% endX %}.
  void expect_end_tag(std::string_view end) {
    if (peek().type != T::kBlockBegin) syntax("expected {% " + std::string(end) + " %}");
    next();
    if (!skip_name(end)) syntax("expected '" + std::string(end) + "'");
    expect_block_end();
  }

  StmtPtr parse_statement() {
    const Token& t = peek();
    if (t.type != T::kName) syntax("expected a tag name");
    const std::string tag = t.text;
    const int line = t.line;
    next();
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (tag == "if") return parse_if(std::move(s));
    if (tag == "for") return parse_for(std::move(s));
    if (tag == "set") return parse_set(std::move(s));
    if (tag == "macro") return parse_macro(std::move(s));
    if (tag == "call") return parse_call_block(std::move(s));
    if (tag == "filter") return parse_filter_block(std::move(s));
    if (tag == "with") return parse_with(std::move(s));
    if (tag == "break" || tag == "continue") {
      s->kind = tag == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
      expect_block_end();
      return s;
    }
    --pos_;
    syntax("Encountered unknown tag '" + tag + "'.", false);
  }

  StmtPtr parse_if(StmtPtr s) {
    s->kind = Stmt::Kind::kIf;
    while (true) {
      s->conditions.push_back(parse_tuple(false));
      expect_block_end();
      s->bodies.push_back(subparse({"elif", "else", "endif"}));
      next();  // {%
      const std::string tag = next().text;
      if (tag == "elif") continue;
      if (tag == "else") {
        expect_block_end();
        s->bodies.push_back(subparse({"endif"}));
        expect_end_tag("endif");
        return s;
      }
      expect_block_end();  // endif
      return s;
    }
  }

  Target parse_target(bool allow_attribute) {
    Target target;
    const bool paren = skip_op("(");
    target.names.push_back(expect_name());
    if (allow_attribute && !paren && is_op(".")) {
      next();
      target.attribute = expect_name();
      return target;
    }
    while (skip_op(",")) {
      target.unpack = true;
      if (peek().type != T::kName) break;  // a trailing comma
      target.names.push_back(expect_name());
    }
    if (paren) expect_op(")");
    return target;
  }

  StmtPtr parse_for(StmtPtr s) {
    s->kind = Stmt::Kind::kFor;
    s->target = parse_target(false);
    if (!skip_name("in")) syntax("expected 'in'");
    s->expr = parse_tuple(false, true);
    if (skip_name("if")) s->filter = parse_tuple(false);
    if (skip_name("recursive")) s->recursive = true;
    expect_block_end();
    s->bodies.push_back(subparse({"endfor", "else"}));
    next();
    if (next().text == "else") {
      expect_block_end();
      s->else_body = subparse({"endfor"});
      expect_end_tag("endfor");
      return s;
    }
    expect_block_end();
    return s;
  }

  StmtPtr parse_set(StmtPtr s) {
    s->target = parse_target(true);
    if (skip_op("=")) {
      s->kind = Stmt::Kind::kSet;
      s->expr = parse_tuple(true);
      expect_block_end();
      return s;
    }
    s->kind = Stmt::Kind::kSetBlock;
    if (s->target.unpack) syntax("a block set assigns one name");
    if (is_op("|")) s->expr = parse_filters(nullptr);
    expect_block_end();
    s->bodies.push_back(subparse({"endset"}));
    expect_end_tag("endset");
    return s;
  }

  std::vector<MacroParam> parse_params() {
    std::vector<MacroParam> params;
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      if (is_op(")")) break;
      MacroParam p;
      p.name = expect_name();
      if (skip_op("=")) p.default_value = parse_expression(true);
      params.push_back(std::move(p));
    }
    expect_op(")");
    return params;
  }

  StmtPtr parse_macro(StmtPtr s) {
    s->kind = Stmt::Kind::kMacro;
    s->text = expect_name();
    s->params = parse_params();
    expect_block_end();
    macros_.push_back(s.get());
    s->bodies.push_back(subparse({"endmacro"}));
    macros_.pop_back();
    expect_end_tag("endmacro");
    return s;
  }

  StmtPtr parse_call_block(StmtPtr s) {
    s->kind = Stmt::Kind::kCallBlock;
    if (is_op("(")) s->params = parse_params();
    s->expr = parse_expression(true);
    if (s->expr->kind != Expr::Kind::kCall) syntax("expected a call");
    expect_block_end();
    s->bodies.push_back(subparse({"endcall"}));
    expect_end_tag("endcall");
    return s;
  }

  StmtPtr parse_filter_block(StmtPtr s) {
    s->kind = Stmt::Kind::kFilterBlock;
    s->expr = parse_filter(nullptr);
    if (is_op("|")) s->expr = parse_filters(std::move(s->expr));
    expect_block_end();
    s->bodies.push_back(subparse({"endfilter"}));
    expect_end_tag("endfilter");
    return s;
  }

  StmtPtr parse_with(StmtPtr s) {
    s->kind = Stmt::Kind::kWith;
    while (peek().type != T::kBlockEnd) {
      if (!s->names.empty()) expect_op(",");
      s->names.push_back(expect_name());
      expect_op("=");
      s->conditions.push_back(parse_expression(true));
    }
    expect_block_end();
    s->bodies.push_back(subparse({"endwith"}));
    expect_end_tag("endwith");
    return s;
  }

  // --- expressions ---

  // A comma-separated list is a tuple: `set a = 1, 2`, `for k, v in ...`.
  ExprPtr parse_tuple(bool with_condition, bool stop_at_recursive = false) {
    const int line = peek().line;
    ExprPtr first = parse_expression(with_condition);
    if (!is_op(",")) return first;
    auto tuple = make_expr(Expr::Kind::kTuple, line);
    tuple->items.push_back(std::move(first));
    while (skip_op(",")) {
      if (at_expression_end() || (stop_at_recursive && (is_name("recursive") || is_name("if")))) break;
      tuple->items.push_back(parse_expression(with_condition));
    }
    return tuple;
  }

  bool at_expression_end() const {
    const T t = peek().type;
    return t == T::kVarEnd || t == T::kBlockEnd || t == T::kEnd || is_op(")") || is_op("]") || is_op("}");
  }

  ExprPtr parse_expression(bool with_condition) { return with_condition ? parse_condition() : parse_or(); }

  ExprPtr parse_condition() {
    ExprPtr value = parse_or();
    while (is_name("if")) {
      const int line = next().line;
      auto cond = make_expr(Expr::Kind::kCondition, line);
      ExprPtr test = parse_or();
      ExprPtr otherwise = skip_name("else") ? parse_condition() : nullptr;
      cond->items.push_back(std::move(value));
      cond->items.push_back(std::move(test));
      cond->items.push_back(std::move(otherwise));
      value = std::move(cond);
    }
    return value;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    auto e = make_expr(Expr::Kind::kBinary, line);
    e->op = op_of(op);
    e->name = std::move(op);
    e->items.push_back(std::move(left));
    e->items.push_back(std::move(right));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      left = binary("or", std::move(left), parse_and(), line);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      left = binary("and", std::move(left), parse_not(), line);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      Nest nest(*this);
      const int line = next().line;
      auto e = make_expr(Expr::Kind::kUnary, line);
      e->name = "not";
      e->op = Op::kNot;
      e->items.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = peek().line;
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (peek().type == T::kOperator &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">="))) {
        op = next().text;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "notin";
      } else {
        break;
      }
      if (!cmp) {
        cmp = make_expr(Expr::Kind::kCompare, line);
        cmp->items.push_back(std::move(first));
      }
      cmp->ops.push_back(op_of(op));
      cmp->items.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      left = binary(t.text, std::move(left), parse_concat(), t.line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      left = binary("~", std::move(left), parse_math2(), line);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      left = binary(t.text, std::move(left), parse_pow(), t.line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const int line = next().line;
      left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    Nest nest(*this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      node = make_expr(Expr::Kind::kUnary, t.line);
      node->name = t.text;
      node->op = t.text == "-" ? Op::kNeg : Op::kPos;
      node->items.push_back(parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_chain(std::move(node));
    return node;
  }

  ExprPtr literal(Value v, int line) {
    auto e = make_expr(Expr::Kind::kLiteral, line);
    e->value = std::move(v);
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    const int line = t.line;
    switch (t.type) {
      case T::kName: {
        const std::string name = next().text;
        if (name == "true" || name == "True") return literal(Value(true), line);
        if (name == "false" || name == "False") return literal(Value(false), line);
        if (name == "none" || name == "None") return literal(Value::none(), line);
        if (!macros_.empty()) {
          if (name == "varargs") macros_.back()->uses_varargs = true;
          if (name == "kwargs") macros_.back()->uses_kwargs = true;
        }
        auto e = make_expr(Expr::Kind::kName, line);
        e->name = name;
        return e;
      }
      case T::kString: {
        std::string s = next().text;
        while (peek().type == T::kString) s += next().text;  // adjacent literals join, as in Python
        return literal(Value(std::move(s)), line);
      }
      case T::kInt: {
        const std::string& text = next().text;
        int64_t v = 0;
        const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
        if (res.ec != std::errc()) syntax("integer literal out of range");
        return literal(Value(v), line);
      }
      case T::kFloat: return literal(Value(std::strtod(next().text.c_str(), nullptr)), line);
      case T::kOperator: break;
      default: syntax("expected an expression");
    }
    if (skip_op("(")) {
      if (skip_op(")")) return make_expr(Expr::Kind::kTuple, line);
      ExprPtr first = parse_expression(true);
      if (skip_op(")")) return first;
      auto tuple = make_expr(Expr::Kind::kTuple, line);
      tuple->items.push_back(std::move(first));
      while (skip_op(",")) {
        if (is_op(")")) break;
        tuple->items.push_back(parse_expression(true));
      }
      expect_op(")");
      return tuple;
    }
    if (skip_op("[")) {
      auto list = make_expr(Expr::Kind::kList, line);
      while (!is_op("]")) {
        if (!list->items.empty()) expect_op(",");
        if (is_op("]")) break;
        list->items.push_back(parse_expression(true));
      }
      expect_op("]");
      return list;
    }
    if (skip_op("{")) {
      auto dict = make_expr(Expr::Kind::kDict, line);
      while (!is_op("}")) {
        if (!dict->items.empty()) expect_op(",");
        if (is_op("}")) break;
        dict->items.push_back(parse_expression(true));
        expect_op(":");
        dict->items.push_back(parse_expression(true));
      }
      expect_op("}");
      return dict;
    }
    syntax("expected an expression");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_chain(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = parse_filters(std::move(node));
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const Token& t = next();
    const int line = t.line;
    if (t.text == ".") {
      if (peek().type == T::kInt) {
        auto e = make_expr(Expr::Kind::kGetItem, line);
        e->items.push_back(std::move(node));
        e->items.push_back(parse_primary());
        return e;
      }
      auto e = make_expr(Expr::Kind::kGetAttr, line);
      e->items.push_back(std::move(node));
      e->name = expect_name();
      return e;
    }
    // [index] or [start:stop:step]
    ExprPtr parts[3];
    int colons = 0;
    for (int i = 0; i < 3; ++i) {
      if (!is_op(":") && !is_op("]")) parts[i] = parse_expression(true);
      if (i < 2 && skip_op(":")) {
        ++colons;
        continue;
      }
      break;
    }
    expect_op("]");
    if (colons == 0) {
      if (!parts[0]) syntax("expected an index");
      auto e = make_expr(Expr::Kind::kGetItem, line);
      e->items.push_back(std::move(node));
      e->items.push_back(std::move(parts[0]));
      return e;
    }
    auto e = make_expr(Expr::Kind::kSlice, line);
    e->items.push_back(std::move(node));
    for (auto& p : parts) e->items.push_back(std::move(p));
    return e;
  }

  // Arguments of a call, a filter or a test: positional, then name=value.
  void parse_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (is_op(")")) break;
      if (peek().type == T::kName && is_op("=", 1)) {
        std::string key = next().text;
        next();
        e.keywords.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e.keywords.empty()) syntax("a positional argument follows a keyword argument");
        e.items.push_back(parse_expression(true));
      }
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    Nest nest(*this);
    auto e = make_expr(Expr::Kind::kCall, peek().line);
    e->items.push_back(std::move(callee));
    parse_args(*e);
    return e;
  }

  // One `| name(args)`; `node` is the input (null in a filter block).
  ExprPtr parse_filter(ExprPtr node) {
    Nest nest(*this);
    auto e = make_expr(Expr::Kind::kFilter, peek().line);
    e->name = expect_name();
    while (skip_op(".")) e->name += "." + expect_name();
    e->items.push_back(std::move(node));
    if (is_op("(")) parse_args(*e);
    return e;
  }

  ExprPtr parse_filters(ExprPtr node) {
    while (skip_op("|")) node = parse_filter(std::move(node));
    return node;
  }

  ExprPtr parse_test(ExprPtr node) {
    Nest nest(*this);
    const int line = next().line;  // is
    auto e = make_expr(Expr::Kind::kTest, line);
    e->negated = skip_name("not");
    e->name = expect_name();
    while (skip_op(".")) e->name += "." + expect_name();
    e->items.push_back(std::move(node));
    const Token& t = peek();
    if (is_op("(")) {
      parse_args(*e);
    } else if ((t.type == T::kName || t.type == T::kString || t.type == T::kInt || t.type == T::kFloat || is_op("[") ||
                is_op("{")) &&
               !(t.type == T::kName && (t.text == "else" || t.text == "or" || t.text == "and"))) {
      // `x is divisibleby 3`: one argument without parentheses.
      e->items.push_back(parse_postfix(parse_primary()));
    }
    return e;
  }

  std::vector<Token> toks_;
  std::vector<Stmt*> macros_;  // the macros being parsed, innermost last
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(std::string_view source) { return Parser(tokenize(source)).parse_all(); }

}  // namespace kvgate::jinja
