#include "gateway/template/builtins.h"

#include <ctime>

#include "gateway/template/call_args.h"
#include "gateway/template/renderer.h"
#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

int64_t range_int(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  fail("'" + std::string(v.type_name()) + "' object cannot be interpreted as an integer");
}

// range(stop), range(start, stop[, step]): a list, bounded by the step limit.
class Range : public Callable {
 public:
  Value call(Renderer& r, CallArgs& args) const override {
    const auto& p = args.positional;
    if (p.empty() || p.size() > 3 || !args.keyword.empty()) fail("range expected 1 to 3 integer arguments");
    const int64_t start = p.size() == 1 ? 0 : range_int(p[0]);
    const int64_t stop = range_int(p.size() == 1 ? p[0] : p[1]);
    const int64_t step = p.size() == 3 ? range_int(p[2]) : 1;
    if (step == 0) fail("range() arg 3 must not be zero");
    std::vector<Value> items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      r.step();
      items.emplace_back(i);
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    return Value::list(std::move(items));
  }
};

Value make_dict(const CallArgs& args, bool is_namespace) {
  auto d = std::make_shared<DictData>();
  d->is_namespace = is_namespace;
  if (args.positional.size() > 1) fail("expected at most 1 positional argument");
  if (!args.positional.empty()) {
    const Value& init = args.positional[0];
    if (!init.is_mapping()) fail("the positional argument must be a mapping");
    d->items = init.as_dict().items;
  }
  for (const auto& [k, v] : args.keyword) d->set(k, v);
  if (!is_namespace) return Value::dict(std::move(d->items));
  return Value(DictPtr(std::move(d)));
}

// namespace(a=1): the one object `set ns.a = ...` may change, so that a
// loop can carry a value out of its iteration scope.
class NamespaceFn : public Callable {
 public:
  Value call(Renderer& r, CallArgs& args) const override {
    Value ns = make_dict(args, true);
    r.track_namespace(ns.dict_ptr());
    return ns;
  }
};

class DictFn : public Callable {
 public:
  Value call(Renderer&, CallArgs& args) const override { return make_dict(args, false); }
};

class RaiseException : public Callable {
 public:
  Value call(Renderer&, CallArgs& args) const override {
    BoundArgs a("raise_exception", args, {"message"});
    throw TemplateError(TemplateError::Kind::kRaised, a.get(0) ? to_str(*a.get(0)) : std::string());
  }
};

class StrftimeNow : public Callable {
 public:
  Value call(Renderer& r, CallArgs& args) const override {
    BoundArgs a("strftime_now", args, {"format"});
    if (!a.get(0) || !a.get(0)->is_string()) fail("strftime_now() needs a format string");
    const std::string& fmt = a.get(0)->as_string();
    if (fmt.size() > 256) fail("strftime_now(): the format is too long");
    const std::tm now = r.now();
    char buf[2048];
    const std::size_t n = fmt.empty() ? 0 : std::strftime(buf, sizeof buf, fmt.c_str(), &now);
    return Value(std::string(buf, n));
  }
};

}  // namespace

const DictData& builtin_globals() {
  static const DictData globals = [] {
    DictData d;
    d.set("range", Value(CallablePtr(std::make_shared<Range>())));
    d.set("namespace", Value(CallablePtr(std::make_shared<NamespaceFn>())));
    d.set("dict", Value(CallablePtr(std::make_shared<DictFn>())));
    d.set("raise_exception", Value(CallablePtr(std::make_shared<RaiseException>())));
    d.set("strftime_now", Value(CallablePtr(std::make_shared<StrftimeNow>())));
    return d;
  }();
  return globals;
}

}  // namespace kvgate::jinja
