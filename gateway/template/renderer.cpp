#include "gateway/template/renderer.h"

#include <cmath>
#include <limits>

#include "gateway/template/builtins.h"
#include "gateway/template/filters.h"
#include "gateway/template/methods.h"
#include "gateway/template/py_string.h"
#include "gateway/template/template_error.h"
#include "gateway/template/predicates.h"

namespace kvgate::jinja {

const Value* Scope::find(std::string_view name) const {
  for (const auto& [k, v] : vars)
    if (k == name) return &v;
  return nullptr;
}

void Scope::set(std::string_view name, Value v) {
  for (auto& [k, old] : vars)
    if (k == name) {
      old = std::move(v);
      return;
    }
  vars.emplace_back(std::string(name), std::move(v));
}

namespace {

[[noreturn]] void limit(const std::string& what) { throw TemplateError(TemplateError::Kind::kLimit, what); }

// Jinja2 names a value's type in "has no attribute" hints this way.
std::string_view object_type(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone: return "None";
    case Value::Kind::kBool: return "bool object";
    case Value::Kind::kInt: return "int object";
    case Value::Kind::kFloat: return "float object";
    case Value::Kind::kString: return v.is_markup() ? "Markup object" : "str object";
    case Value::Kind::kList:
      return v.as_list().generator ? "generator object" : v.as_list().tuple ? "tuple object" : "list object";
    case Value::Kind::kDict: return v.as_dict().is_namespace ? "Namespace object" : "dict object";
    case Value::Kind::kCallable: return "function object";
    case Value::Kind::kUndefined: return "Undefined object";
  }
  return "object";
}

// A macro: its parameters' defaults are evaluated at each call, in the
// macro's scope, and its free names resolve through the scope it was
// defined in (late: a name set after the definition is seen).
class Macro : public Callable {
 public:
  Macro(const Stmt& def, const Body& body, std::shared_ptr<Scope> closure)
      : def_(def), body_(body), closure_(std::move(closure)) {}

  Value call(Renderer& r, CallArgs& args) const override {
    Renderer::DepthGuard depth(r);
    auto scope = std::make_shared<Scope>();
    scope->parent = closure_;
    const auto& params = def_.params;
    auto who = [this] {
      return "macro '" + (def_.kind == Stmt::Kind::kMacro ? def_.text : std::string("caller")) + "'";
    };
    if (args.positional.size() > params.size() && !def_.uses_varargs)
      fail(who() + " takes not more than " + std::to_string(params.size()) + " argument(s)");
    std::vector<Value> varargs;
    for (std::size_t i = 0; i < args.positional.size(); ++i) {
      if (i < params.size()) {
        scope->set(params[i].name, args.positional[i]);
      } else {
        varargs.push_back(args.positional[i]);
      }
    }
    std::vector<std::pair<std::string, Value>> kwargs;
    for (auto& [name, value] : args.keyword) {
      if (name == "caller") {
        scope->set(name, value);
        continue;
      }
      bool is_param = false;
      for (const MacroParam& p : params)
        if (p.name == name) is_param = true;
      if (is_param && !scope->find(name)) {
        scope->set(name, value);
      } else if (def_.uses_kwargs && !is_param) {
        kwargs.emplace_back(name, value);
      } else {
        fail(who() + " takes no keyword argument '" + name + "'");
      }
    }
    // Defaults are evaluated in the macro's own scope, so a default can
    // name an earlier parameter.
    for (const MacroParam& p : params) {
      if (scope->find(p.name)) continue;
      scope->set(p.name, Value::undefined("parameter '" + p.name + "' was not provided"));
      if (p.default_value) {
        Value v = r.eval_in_scope(*p.default_value, scope);
        scope->set(p.name, std::move(v));
      }
    }
    scope->set("varargs", Value::list(std::move(varargs), false, true));
    scope->set("kwargs", Value::dict(std::move(kwargs)));
    return Value(r.run_body(body_, std::move(scope)));
  }
  std::string_view type_name() const override { return "Macro"; }

 private:
  const Stmt& def_;
  const Body& body_;
  std::shared_ptr<Scope> closure_;
};

// loop.cycle(a, b, ...): the argument at this iteration's index.
class LoopCycle : public Callable {
 public:
  explicit LoopCycle(std::size_t index) : index_(index) {}
  Value call(Renderer&, CallArgs& args) const override {
    if (args.positional.empty()) fail("no items for cycling given");
    return args.positional[index_ % args.positional.size()];
  }

 private:
  std::size_t index_;
};

bool overflowed(bool o) {
  if (o) fail("integer overflow: the result does not fit in 64 bits");
  return false;
}

int64_t int_of(const Value& v) { return v.is_int() ? v.as_int() : static_cast<int64_t>(v.as_bool()); }

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  fail("unsupported operand type(s) for " + std::string(op) + ": '" + std::string(a.type_name()) + "' and '" +
       std::string(b.type_name()) + "'");
}

}  // namespace

// Python's % on strings, for the conversions templates write: %s %r %d %i %f %%.
std::string percent_format(Renderer& r, const std::string& fmt, const Value& args) {
  std::vector<Value> items;
  if (args.is_list() && args.as_list().tuple) {
    items = args.as_list().items;
  } else {
    items.push_back(args);
  }
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i == fmt.size()) fail("incomplete format");
    const char c = fmt[i];
    if (c == '%') {
      out += '%';
      continue;
    }
    if (next >= items.size()) fail("not enough arguments for format string");
    const Value& v = items[next++];
    switch (c) {
      case 's': append_str(out, v); break;
      case 'r': out += to_repr(v); break;
      case 'd':
      case 'i':
        if (!v.is_number())
          fail("%" + std::string(1, c) + " format: a real number is required, not " + std::string(v.type_name()));
        if (v.is_float() && !(std::fabs(v.as_float()) < 9.2e18)) fail("cannot convert float to an integer here");
        out += std::to_string(v.is_float() ? static_cast<int64_t>(v.as_float()) : int_of(v));
        break;
      case 'f': {
        if (!v.is_number()) fail("must be real number, not " + std::string(v.type_name()));
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.6f", v.to_double());
        out += buf;
        break;
      }
      default: fail("unsupported format character '" + std::string(1, c) + "'");
    }
    r.check_size(out.size());
  }
  if (next < items.size()) fail("not all arguments converted during string formatting");
  return out;
}

Renderer::DepthGuard::DepthGuard(Renderer& r) : r_(r) {
  if (++r_.call_depth_ > r_.limits_.max_call_depth) {
    --r_.call_depth_;
    limit("the template nests macro calls deeper than " + std::to_string(r_.limits_.max_call_depth));
  }
}

Renderer::Renderer(const DictData& context, const Limits& limits, Clock clock)
    : context_(context), limits_(limits), clock_(std::move(clock)), scope_(std::make_shared<Scope>()) {}

Renderer::~Renderer() {
  // Every cycle passes through a macro's closure scope or a namespace:
  // scopes' parents point only outward, lists never change once built.
  for (const auto& scope : closures_) scope->vars.clear();
  for (const auto& ns : namespaces_) ns->items.clear();
}

std::string Renderer::render(const Body& body) {
  std::string out;
  exec(body, out);
  return out;
}

void Renderer::step() {
  if (++steps_ > limits_.max_steps) limit("the template ran more than " + std::to_string(limits_.max_steps) + " steps");
}

void Renderer::charge_bytes(std::size_t bytes) {
  steps_ += bytes >> 10;
  step();
}

void Renderer::charge(const Value& v) {
  if (v.is_string()) {
    steps_ += v.as_string().size() >> 10;
  } else if (v.is_list()) {
    steps_ += v.as_list().items.size();
  } else if (v.is_dict()) {
    steps_ += v.as_dict().items.size();
  }
  step();
}

void Renderer::check_size(std::size_t bytes) const {
  if (bytes > limits_.max_output_bytes)
    limit("the template built a text longer than " + std::to_string(limits_.max_output_bytes) + " bytes");
}

void Renderer::append(std::string& out, const Value& v) {
  append_str(out, v);
  check_size(out.size());
}

std::string Renderer::run_body(const Body& body, std::shared_ptr<Scope> scope) {
  std::shared_ptr<Scope> saved = std::exchange(scope_, std::move(scope));
  std::string out;
  try {
    exec(body, out);
  } catch (...) {
    scope_ = std::move(saved);
    throw;
  }
  scope_ = std::move(saved);
  return out;
}

Value Renderer::eval_in_scope(const Expr& e, std::shared_ptr<Scope> scope) {
  std::shared_ptr<Scope> saved = std::exchange(scope_, std::move(scope));
  try {
    Value v = eval(e);
    scope_ = std::move(saved);
    return v;
  } catch (...) {
    scope_ = std::move(saved);
    throw;
  }
}

// ---- statements ----

Renderer::Flow Renderer::exec(const Body& body, std::string& out) {
  for (const StmtPtr& s : body) {
    const Flow f = exec_stmt(*s, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Renderer::Flow Renderer::exec_stmt(const Stmt& s, std::string& out) {
  step();
  switch (s.kind) {
    case Stmt::Kind::kText:
      out += s.text;
      check_size(out.size());
      return Flow::kNormal;
    case Stmt::Kind::kOutput: append(out, eval(*s.expr)); return Flow::kNormal;
    case Stmt::Kind::kIf: {
      Flow flow = Flow::kNormal;
      exec_if(s, out, flow);
      return flow;
    }
    case Stmt::Kind::kFor: exec_for(s, out); return Flow::kNormal;
    case Stmt::Kind::kSet: assign(s.target, eval(*s.expr)); return Flow::kNormal;
    case Stmt::Kind::kSetBlock: {
      std::string text;
      exec(s.bodies[0], text);
      Value v(std::move(text));
      if (s.expr) v = eval_filter(*s.expr, &v);
      assign(s.target, std::move(v));
      return Flow::kNormal;
    }
    case Stmt::Kind::kMacro:
      closures_.push_back(scope_);
      scope_->set(s.text, Value(CallablePtr(std::make_shared<Macro>(s, s.bodies[0], scope_))));
      return Flow::kNormal;
    case Stmt::Kind::kCallBlock: {
      const Expr& call_expr = *s.expr;
      Value callee = eval(*call_expr.items[0]);
      CallArgs args;
      eval_args(call_expr, 1, args);
      closures_.push_back(scope_);
      args.keyword.emplace_back("caller", Value(CallablePtr(std::make_shared<Macro>(s, s.bodies[0], scope_))));
      append(out, call(callee, args));
      return Flow::kNormal;
    }
    case Stmt::Kind::kFilterBlock: {
      std::string text;
      exec(s.bodies[0], text);
      const Value v(std::move(text));
      append(out, eval_filter(*s.expr, &v));
      return Flow::kNormal;
    }
    case Stmt::Kind::kWith: {
      // The values are evaluated in the enclosing scope, then bound in a new one.
      auto inner = std::make_shared<Scope>();
      inner->parent = scope_;
      for (std::size_t i = 0; i < s.names.size(); ++i) inner->set(s.names[i], eval(*s.conditions[i]));
      const std::shared_ptr<Scope> outer = std::exchange(scope_, std::move(inner));
      Flow flow = Flow::kNormal;
      try {
        flow = exec(s.bodies[0], out);
      } catch (...) {
        scope_ = outer;
        throw;
      }
      scope_ = outer;
      return flow;
    }
    case Stmt::Kind::kBreak: return Flow::kBreak;
    case Stmt::Kind::kContinue: return Flow::kContinue;
  }
  return Flow::kNormal;
}

void Renderer::exec_if(const Stmt& s, std::string& out, Flow& flow) {
  for (std::size_t i = 0; i < s.conditions.size(); ++i) {
    if (truthy(eval(*s.conditions[i]))) {
      flow = exec(s.bodies[i], out);
      return;
    }
  }
  if (s.bodies.size() > s.conditions.size()) flow = exec(s.bodies.back(), out);
}

void Renderer::assign(const Target& target, Value v) {
  if (!target.attribute.empty()) {
    const Value ns = lookup(target.names[0]);
    if (!ns.is_dict() || !ns.as_dict().is_namespace) fail("cannot assign attribute on non-namespace object");
    ns.dict_ptr()->set(target.attribute, std::move(v));
    return;
  }
  if (!target.unpack) {
    scope_->set(target.names[0], std::move(v));
    return;
  }
  charge(v);
  const std::vector<Value> items = iterate(v);
  if (items.size() < target.names.size())
    fail("not enough values to unpack (expected " + std::to_string(target.names.size()) + ", got " +
         std::to_string(items.size()) + ")");
  if (items.size() > target.names.size())
    fail("too many values to unpack (expected " + std::to_string(target.names.size()) + ")");
  for (std::size_t i = 0; i < items.size(); ++i) scope_->set(target.names[i], items[i]);
}

void Renderer::exec_for(const Stmt& s, std::string& out) {
  if (s.recursive) fail("recursive for loops are not supported");
  const Value iterable = eval(*s.expr);
  charge(iterable);
  std::vector<Value> items = iterate(iterable);
  const std::shared_ptr<Scope> outer = scope_;
  if (s.filter) {
    // `for x in xs if cond`: the loop (and loop.length) sees only the kept items.
    std::vector<Value> kept;
    for (Value& item : items) {
      step();
      scope_ = std::make_shared<Scope>();
      scope_->parent = outer;
      try {
        assign(s.target, item);
        if (truthy(eval(*s.filter))) kept.push_back(std::move(item));
      } catch (...) {
        scope_ = outer;
        throw;
      }
      scope_ = outer;
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec(s.else_body, out);
    return;
  }
  const std::size_t n = items.size();
  try {
    for (std::size_t i = 0; i < n; ++i) {
      step();
      scope_ = std::make_shared<Scope>();
      scope_->parent = outer;
      const auto index = static_cast<int64_t>(i);
      const auto length = static_cast<int64_t>(n);
      Value loop = Value::dict({
          {"index", Value(index + 1)},
          {"index0", Value(index)},
          {"revindex", Value(length - index)},
          {"revindex0", Value(length - index - 1)},
          {"first", Value(i == 0)},
          {"last", Value(i + 1 == n)},
          {"length", Value(length)},
          {"depth", Value(1)},
          {"depth0", Value(0)},
          {"previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item")},
          {"nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item")},
          {"cycle", Value(CallablePtr(std::make_shared<LoopCycle>(i)))},
      });
      scope_->set("loop", std::move(loop));
      assign(s.target, items[i]);
      if (exec(s.bodies[0], out) == Flow::kBreak) break;
    }
  } catch (...) {
    scope_ = outer;
    throw;
  }
  scope_ = outer;
}

// ---- expressions ----

Value Renderer::lookup(const std::string& name) const {
  for (const Scope* s = scope_.get(); s; s = s->parent.get())
    if (const Value* v = s->find(name)) return *v;
  if (const Value* v = context_.find(name)) return *v;
  if (const Value* v = builtin_globals().find(name)) return *v;
  return Value::undefined(Undefined::Form::kName, name);
}

Value get_attribute(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail(obj.as_undefined().message());
  if (obj.is_dict()) {
    if (!obj.as_dict().is_namespace)
      if (auto m = method_of(obj, name)) return *m;
    if (const Value* v = obj.as_dict().find(name)) return *v;
  } else if (auto m = method_of(obj, name)) {
    return *m;
  }
  return Value::undefined(Undefined::Form::kAttribute, name, object_type(obj));
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail(obj.as_undefined().message());
  if (obj.is_dict() && key.is_string()) {
    if (const Value* v = obj.as_dict().find(key.as_string())) return *v;
    return get_attribute(obj, key.as_string());
  }
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    const int64_t n = obj.is_list() ? static_cast<int64_t>(obj.as_list().items.size())
                                    : static_cast<int64_t>(code_point_count(obj.as_string()));
    int64_t i = key.is_int() ? key.as_int() : key.as_bool();
    if (i < 0) i += n;
    if (i >= 0 && i < n && !(obj.is_list() && obj.as_list().generator)) {
      if (obj.is_list()) return obj.as_list().items[static_cast<std::size_t>(i)];
      return Value(str_slice(obj.as_string(), i, i + 1, 1));
    }
  } else if (key.is_string()) {
    return get_attribute(obj, key.as_string());
  }
  return Value::undefined(Undefined::Form::kElement, to_repr(key), object_type(obj));
}

void Renderer::eval_args(const Expr& e, std::size_t first, CallArgs& args) {
  for (std::size_t i = first; i < e.items.size(); ++i) args.positional.push_back(eval(*e.items[i]));
  for (const auto& [name, expr] : e.keywords) args.keyword.emplace_back(name, eval(*expr));
}

Value Renderer::call(const Value& callee, CallArgs& args) {
  step();
  for (const Value& a : args.positional) charge(a);
  if (callee.is_undefined()) fail(callee.as_undefined().message());
  if (!callee.is_callable()) fail("'" + std::string(callee.type_name()) + "' object is not callable");
  return callee.as_callable().call(*this, args);
}

Value Renderer::filter(std::string_view name, const Value& input, CallArgs& args) {
  charge(input);
  return apply_filter(*this, name, input, args);
}

bool Renderer::test(std::string_view name, const Value& v, CallArgs& args) {
  step();
  return apply_test(*this, name, v, args);
}

Value Renderer::eval_call(const Expr& e) {
  const Value callee = eval(*e.items[0]);
  CallArgs args;
  eval_args(e, 1, args);
  return call(callee, args);
}

// A filter chain: `input` replaces the innermost filter's missing input (a
// filter block's or a block set's text).
Value Renderer::eval_filter(const Expr& e, const Value* input) {
  Value in;
  if (e.items[0]) {
    in = e.items[0]->kind == Expr::Kind::kFilter ? eval_filter(*e.items[0], input) : eval(*e.items[0]);
  } else if (input) {
    in = *input;
  }
  CallArgs args;
  eval_args(e, 1, args);
  return filter(e.name, in, args);
}

Value Renderer::eval(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kLiteral: return e.value;
    case Expr::Kind::kName: return lookup(e.name);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      std::vector<Value> items;
      items.reserve(e.items.size());
      for (const ExprPtr& item : e.items) items.push_back(eval(*item));
      return Value::list(std::move(items), false, e.kind == Expr::Kind::kTuple);
    }
    case Expr::Kind::kDict: {
      DictData d;
      for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) {
        const Value k = eval(*e.items[i]);
        if (!k.is_string()) fail("dict keys in a template must be strings, not " + std::string(k.type_name()));
        d.set(k.as_string(), eval(*e.items[i + 1]));
      }
      return Value::dict(std::move(d.items));
    }
    case Expr::Kind::kGetAttr: return get_attribute(eval(*e.items[0]), e.name);
    case Expr::Kind::kGetItem: {
      const Value obj = eval(*e.items[0]);
      if (obj.is_string()) charge(obj);  // indexes count code points
      return get_item(obj, eval(*e.items[1]));
    }
    case Expr::Kind::kSlice: {
      const Value obj = eval(*e.items[0]);
      charge(obj);
      std::optional<int64_t> bounds[3];
      for (int i = 0; i < 3; ++i) {
        if (!e.items[static_cast<std::size_t>(i) + 1]) continue;
        const Value b = eval(*e.items[static_cast<std::size_t>(i) + 1]);
        if (b.is_none()) continue;
        if (!b.is_int() && !b.is_bool()) fail("slice indices must be integers or None");
        bounds[i] = int_of(b);
      }
      if (obj.is_undefined()) fail(obj.as_undefined().message());
      if (obj.is_string()) return Value(str_slice(obj.as_string(), bounds[0], bounds[1], bounds[2]));
      if (obj.is_list() && !obj.as_list().generator) {
        const auto& items = obj.as_list().items;
        std::vector<Value> out;
        for (std::size_t i : slice_positions(items.size(), bounds[0], bounds[1], bounds[2])) out.push_back(items[i]);
        return Value::list(std::move(out), false, obj.as_list().tuple);
      }
      fail("'" + std::string(obj.type_name()) + "' object is not subscriptable");
    }
    case Expr::Kind::kCall: return eval_call(e);
    case Expr::Kind::kFilter: return eval_filter(e, nullptr);
    case Expr::Kind::kTest: {
      const Value v = eval(*e.items[0]);
      CallArgs args;
      eval_args(e, 1, args);
      return Value(test(e.name, v, args) != e.negated);
    }
    case Expr::Kind::kUnary: {
      const Value v = eval(*e.items[0]);
      if (e.op == Op::kNot) return Value(!truthy(v));
      if (v.is_undefined()) fail(v.as_undefined().message());
      if (!v.is_number()) fail("bad operand type for unary " + e.name + ": '" + std::string(v.type_name()) + "'");
      if (e.op == Op::kPos) return v.is_bool() ? Value(int_of(v)) : v;
      if (v.is_float()) return Value(-v.as_float());
      if (int_of(v) == std::numeric_limits<int64_t>::min()) overflowed(true);
      return Value(-int_of(v));
    }
    case Expr::Kind::kBinary: return eval_binary(e);
    case Expr::Kind::kCompare: return eval_compare(e);
    case Expr::Kind::kCondition: {
      if (truthy(eval(*e.items[1]))) return eval(*e.items[0]);
      if (e.items[2]) return eval(*e.items[2]);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return Value();
}

Value Renderer::eval_binary(const Expr& e) {
  const std::string& op = e.name;  // as written, for messages
  const Op code = e.op;
  if (code == Op::kAnd) {
    Value a = eval(*e.items[0]);
    return truthy(a) ? eval(*e.items[1]) : a;
  }
  if (code == Op::kOr) {
    Value a = eval(*e.items[0]);
    return truthy(a) ? a : eval(*e.items[1]);
  }
  const Value a = eval(*e.items[0]);
  const Value b = eval(*e.items[1]);
  if (code == Op::kConcat) {
    std::string s = to_str(a);
    const std::string t = to_str(b);
    check_size(s.size() + t.size());
    charge_bytes(s.size() + t.size());
    return Value(s + t);
  }
  if (a.is_undefined()) fail(a.as_undefined().message());
  if (b.is_undefined()) fail(b.as_undefined().message());
  const bool ints = (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
  const bool nums = a.is_number() && b.is_number();
  int64_t r = 0;
  if (code == Op::kAdd) {
    if (ints) return overflowed(__builtin_add_overflow(int_of(a), int_of(b), &r)), Value(r);
    if (nums) return Value(a.to_double() + b.to_double());
    if (a.is_string() && b.is_string()) {
      check_size(a.as_string().size() + b.as_string().size());
      charge_bytes(a.as_string().size() + b.as_string().size());
      // Markup escapes the plain text added to it, on either side.
      if (a.is_markup() || b.is_markup()) {
        const std::string left = a.is_markup() ? a.as_string() : html_escape(a.as_string());
        const std::string right = b.is_markup() ? b.as_string() : html_escape(b.as_string());
        check_size(left.size() + right.size());
        return Value::markup(left + right);
      }
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && !a.as_list().generator && !b.as_list().generator &&
        a.as_list().tuple == b.as_list().tuple) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      check_size(items.size());
      return Value::list(std::move(items), false, a.as_list().tuple);
    }
    if (a.is_string() || (a.is_list() && !a.as_list().generator))
      fail("can only concatenate " + std::string(a.type_name()) + " (not \"" + std::string(b.type_name()) + "\") to " +
           std::string(a.type_name()));
    unsupported(op, a, b);
  }
  if (code == Op::kSub) {
    if (ints) return overflowed(__builtin_sub_overflow(int_of(a), int_of(b), &r)), Value(r);
    if (nums) return Value(a.to_double() - b.to_double());
    unsupported(op, a, b);
  }
  if (code == Op::kMul) {
    if (ints) return overflowed(__builtin_mul_overflow(int_of(a), int_of(b), &r)), Value(r);
    if (nums) return Value(a.to_double() * b.to_double());
    const Value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
    const Value* times = seq == &a ? &b : &a;
    if (seq && (times->is_int() || times->is_bool()) && !(seq->is_list() && seq->as_list().generator)) {
      const int64_t n = std::max<int64_t>(0, int_of(*times));
      if (seq->is_string()) {
        const std::size_t unit = seq->as_string().size();
        if (unit != 0) check_size(unit * static_cast<std::size_t>(std::min<int64_t>(n, int64_t{1} << 40)));
        std::string out;
        for (int64_t i = 0; i < n && unit != 0; ++i) out += seq->as_string();
        return Value(std::move(out));
      }
      const std::size_t unit = seq->as_list().items.size();
      if (unit != 0) check_size(unit * static_cast<std::size_t>(std::min<int64_t>(n, int64_t{1} << 40)));
      std::vector<Value> items;
      for (int64_t i = 0; i < n && unit != 0; ++i)
        items.insert(items.end(), seq->as_list().items.begin(), seq->as_list().items.end());
      return Value::list(std::move(items), false, seq->as_list().tuple);
    }
    unsupported(op, a, b);
  }
  if (code == Op::kDiv) {
    if (!nums) unsupported(op, a, b);
    if (b.to_double() == 0) fail("division by zero");
    return Value(a.to_double() / b.to_double());
  }
  if (code == Op::kFloorDiv || code == Op::kMod) {
    if (code == Op::kMod && a.is_string()) return Value(percent_format(*this, a.as_string(), b));
    if (!nums) unsupported(op, a, b);
    if (ints) {
      const int64_t x = int_of(a), y = int_of(b);
      if (y == 0) fail("integer division or modulo by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) overflowed(true);
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(code == Op::kFloorDiv ? q : m);
    }
    const double x = a.to_double(), y = b.to_double();
    if (y == 0) fail(code == Op::kFloorDiv ? "float floor division by zero" : "float modulo");
    if (code == Op::kFloorDiv) return Value(std::floor(x / y));
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return Value(m);
  }
  if (code == Op::kPow) {
    if (!nums) unsupported(op, a, b);
    if (ints && int_of(b) >= 0) {
      int64_t base = int_of(a), exp = int_of(b), result = 1;
      while (exp > 0) {
        if (exp & 1) overflowed(__builtin_mul_overflow(result, base, &result));
        exp >>= 1;
        if (exp > 0) overflowed(__builtin_mul_overflow(base, base, &base));
      }
      return Value(result);
    }
    if (a.to_double() == 0 && b.to_double() < 0) fail("0.0 cannot be raised to a negative power");
    return Value(std::pow(a.to_double(), b.to_double()));
  }
  fail("unknown operator " + op);
}

namespace {

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kString:
      if (item.is_undefined()) fail(item.as_undefined().message());
      if (!item.is_string())
        fail("'in <string>' requires string as left operand, not " + std::string(item.type_name()));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.as_list().items)
        if (equal(v, item)) return true;
      return false;
    case Value::Kind::kDict:
      if (container.as_dict().is_namespace) fail("argument of type 'Namespace' is not iterable");
      return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
    case Value::Kind::kUndefined: return false;  // Undefined iterates as empty
    default: fail("argument of type '" + std::string(container.type_name()) + "' is not iterable");
  }
}

}  // namespace

Value Renderer::eval_compare(const Expr& e) {
  Value left = eval(*e.items[0]);
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.items[i + 1]);
    charge(left);
    charge(right);
    bool ok = false;
    switch (e.ops[i]) {
      case Op::kEq: ok = equal(left, right); break;
      case Op::kNe: ok = !equal(left, right); break;
      case Op::kLt: ok = less(left, right, "<"); break;
      case Op::kGt: ok = less(right, left, ">"); break;
      case Op::kLe: ok = !less(right, left, "<="); break;
      case Op::kGe: ok = !less(left, right, ">="); break;
      case Op::kIn: ok = contains(right, left); break;
      default: ok = !contains(right, left); break;
    }
    if (!ok) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

}  // namespace kvgate::jinja
