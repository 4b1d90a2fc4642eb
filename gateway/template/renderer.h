// One render of a parsed template: the tree-walking interpreter, with
// Jinja2's scoping (a `for` body's `set` stays in its iteration; macros
// see the variables of the scope they were defined in, as of the call;
// `namespace()` objects carry values out of loops), its Undefined rules,
// and the limits counted as it goes. Filters, tests, methods and globals
// live in their own files and call back into the renderer.
//
// A Renderer is made per render and used by one thread; the tree it walks
// is shared and never changed.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/template/ast.h"
#include "gateway/template/limits.h"
#include "gateway/template/value.h"

namespace kvgate::jinja {

// The variables of one scope: an iteration, a macro call, the template.
struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;
  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value v);
};

// Where strftime_now() reads the time, as a local calendar time.
using Clock = std::function<std::tm()>;

class Renderer {
 public:
  Renderer(const DictData& context, const Limits& limits, Clock clock);
  // Breaks the reference cycles a render can make (a macro held by the
  // scope it closes over; a namespace holding itself), so nothing leaks.
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Runs the template's statements; the text it writes.
  std::string render(const Body& body);

  Value eval(const Expr& e);
  // Calls anything callable (a macro, a global, a bound method).
  Value call(const Value& callee, CallArgs& args);
  Value filter(std::string_view name, const Value& input, CallArgs& args);
  bool test(std::string_view name, const Value& v, CallArgs& args);

  // One unit of work; throws TemplateError (kLimit) past max_steps.
  void step();
  // Work proportional to a value's size (1 per item, 1 per KiB of text),
  // counted against the same budget, so a loop over big values is bounded too.
  void charge(const Value& v);
  void charge_bytes(std::size_t bytes);
  // A namespace() made by this render, to be cleared when it ends.
  void track_namespace(const DictPtr& ns) { namespaces_.push_back(ns); }
  // Throws TemplateError (kLimit) if a string of `bytes` is too long to build.
  void check_size(std::size_t bytes) const;
  const Limits& limits() const { return limits_; }
  std::tm now() const { return clock_(); }

  // Runs a macro's body in its own scope (macro.cpp calls it).
  std::string run_body(const Body& body, std::shared_ptr<Scope> scope);
  Value eval_in_scope(const Expr& e, std::shared_ptr<Scope> scope);
  struct DepthGuard {
    explicit DepthGuard(Renderer& r);
    ~DepthGuard() { --r_.call_depth_; }
    Renderer& r_;
  };

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow exec(const Body& body, std::string& out);
  Flow exec_stmt(const Stmt& s, std::string& out);
  void exec_for(const Stmt& s, std::string& out);
  void exec_if(const Stmt& s, std::string& out, Flow& flow);
  void assign(const Target& target, Value v);
  void append(std::string& out, const Value& v);

  Value lookup(const std::string& name) const;
  Value eval_binary(const Expr& e);
  Value eval_compare(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_filter(const Expr& e, const Value* input);
  void eval_args(const Expr& e, size_t first, CallArgs& args);

  const DictData& context_;
  Limits limits_;
  Clock clock_;
  std::shared_ptr<Scope> scope_;
  std::vector<std::shared_ptr<Scope>> closures_;  // scopes a macro closes over
  std::vector<DictPtr> namespaces_;
  uint64_t steps_ = 0;
  int call_depth_ = 0;
};

// Python's `format % args` for the conversions templates write: %s %r %d %i %f %%.
std::string percent_format(Renderer& r, const std::string& format, const Value& args);

// Python's getattr-then-getitem, as Jinja2 resolves `obj.name`.
Value get_attribute(const Value& obj, const std::string& name);
// Jinja2's getitem-then-getattr, as it resolves `obj[key]`.
Value get_item(const Value& obj, const Value& key);

}  // namespace kvgate::jinja
