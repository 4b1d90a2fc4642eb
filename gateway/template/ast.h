// The parsed template: expressions and statements, as Jinja2's parser
// builds them. Immutable once parsed; a compiled Template shares its tree
// between renders on any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gateway/template/value.h"

namespace kvgate::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Operators, decided once when parsing.
enum class Op : uint8_t {
  kNone,
  kAnd,
  kOr,
  kNot,
  kNeg,
  kPos,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,
};

struct Expr {
  enum class Kind {
    kLiteral,    // value
    kName,       // name
    kList,       // items
    kTuple,      // items
    kDict,       // items (key, value, key, value, ...)
    kGetAttr,    // a.name: items[0], name
    kGetItem,    // a[b]: items[0], items[1]
    kSlice,      // a[b:c:d]: items[0..3], absent ones null
    kCall,       // f(args): items[0] the callee, items[1..] the positional args, keywords
    kFilter,     // x | name(args): items[0] the input (null in a filter block), items[1..], keywords
    kTest,       // x is [not] name(args): items[0], items[1..]; negated
    kUnary,      // op items[0]: "-", "+", "not"
    kBinary,     // items[0] op items[1]: + - * / // % ** ~ and or
    kCompare,    // items[0] ops[0] items[1] ops[1] items[2] ... (chained, as Python)
    kCondition,  // items[0] if items[1] else items[2] (items[2] null when absent)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;   // a name, an attribute, a filter or test, a unary/binary operator as written
  Op op = Op::kNone;  // kUnary's and kBinary's operator
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<Op> ops;  // kCompare's operators, in order
  bool negated = false;
};

// What `set` and `for` assign to: a name, names to unpack, or ns.attr.
struct Target {
  std::vector<std::string> names;  // one, or several to unpack
  std::string attribute;           // set on the namespace names[0]
  bool unpack = false;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Stmt {
  enum class Kind {
    kText,         // text
    kOutput,       // {{ expr }}
    kIf,           // conditions[i] -> bodies[i]; a last extra body is the else
    kFor,          // for target in expr [if filter] body [else else_body]
    kSet,          // set target = expr
    kSetBlock,     // set target | filters: body
    kMacro,        // macro name(params): body
    kCallBlock,    // call(params) expr: body (the body is the macro `caller`)
    kFilterBlock,  // filter f | g: body
    kWith,         // with names[i] = conditions[i], ...: body, in a scope of its own
    kBreak,
    kContinue,
  };
  Kind kind;
  int line = 0;
  std::string text;  // kText; the macro's name
  ExprPtr expr;      // output, for's iterable, set's value, call's call, filter chain, setblock's filters
  ExprPtr filter;    // for's `if` condition
  Target target;
  std::vector<std::string> names;   // kWith's
  std::vector<ExprPtr> conditions;  // if's conditions; with's values
  std::vector<Body> bodies;         // if's branches; the body of everything else is bodies[0]
  Body else_body;
  std::vector<MacroParam> params;
  bool recursive = false;
  bool uses_varargs = false;  // a macro whose body names `varargs` takes extra positional arguments
  bool uses_kwargs = false;   // ... `kwargs`, extra keyword arguments
};

}  // namespace kvgate::jinja
