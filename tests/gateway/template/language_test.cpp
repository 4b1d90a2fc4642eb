// The Jinja language as Jinja2 runs it for Hugging Face (trim_blocks,
// lstrip_blocks, loopcontrols, the immutable sandbox): whitespace control,
// loops and their scoping, macros, namespaces, filters, tests, Python's
// value formatting, the errors and the limits. Every expected text and
// message in the tables was produced by Python's Jinja2 3.1 with the
// environment ../shared/tools/render_templates.py builds.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "gateway/template/template.h"

namespace kvgate::jinja {
namespace {

// msgs: two messages; d: a dict whose keys are not in sorted order, one
// not ASCII; n: None.
Value language_context() {
  return Value::dict({
      {"msgs", Value::list({Value::dict({{"role", Value("user")}, {"content", Value("hi")}}),
                            Value::dict({{"role", Value("assistant")}, {"content", Value(" yo ")}})})},
      {"d", Value::dict({{"b", Value(2)}, {"a", Value(1)}, {"é", Value("ü")}})},
      {"n", Value::none()},
  });
}

std::tm fixed_now() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_hour = 12;
  return tm;
}

std::string render(const std::string& source, const RenderOptions& options = {}) {
  RenderOptions o = options;
  if (!o.clock) o.clock = fixed_now;
  return Template::compile(source).render(language_context(), o);
}

struct Case {
  const char* source;
  const char* expected;
};

TEST(JinjaLanguage, RendersAsJinja2) {
  const std::vector<Case> cases = {
      {"a\n  {% if true %}\n  b\n  {% endif %}\nc", "a\n  b\nc"},
      {"a {% if true %}b{% endif %} c", "a b c"},
      {"{{ 'x' }}  {% if true %}y{% endif %}", "x  y"},
      {"a  {%- if true -%}  b  {%- endif %}  c", "ab  c"},
      {"a\n  {%+ if true %}b{% endif +%}\nc", "a\n  b\nc"},
      {"a {# note #}\nb\n  {#- note -#}  c", "a bc"},
      {"line\n", "line"},
      {"{% raw %}{{ not rendered }}{% endraw %}", "{{ not rendered }}"},
      {"{% for m in msgs %}{{ loop.index }}/{{ loop.length }}{{ m.role }}{% if not loop.last %},{% endif %}{% endfor "
       "%}",
       "1/2user,2/2assistant"},
      {"{% for m in msgs if m.role == 'assistant' %}{{ loop.index0 }}:{{ m.content }}{% endfor %}", "0: yo "},
      {"{% for x in [] %}x{% else %}empty{% endfor %}", "empty"},
      {"{% for x in [1,2,3,4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% "
       "endfor %}",
       "13"},
      {"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", "b=2;a=1;é=ü;"},
      {"{% set x = 0 %}{% for i in [1,2] %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}", "01010"},
      {"{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "6"},
      {"{% for x in [1,2,3] %}{{ loop.cycle('a','b') }}{{ loop.previtem | default('-') }}{{ loop.nextitem | "
       "default('-') }}{% endfor %}",
       "a-2b13a2-"},
      {"{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', "
       "punct='?') }}",
       "Hi Ann! Hi Bob?"},
      {"{% macro later() %}{{ y }}{% endmacro %}{% set y = 5 %}{{ later() }}", "5"},
      {"{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}inside{% endcall %}", "[inside]"},
      {"{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}", "1(2,){'k': 3}"},
      {"{% set t %}  block  {% endset %}[{{ t }}]", "[  block  ]"},
      {"{% set ns = namespace() %}{% set ns.x %}a{{ 1 }}{% endset %}{{ ns.x }}", "a1"},
      {"{{ '\\u00a0 x \\u3000\\x85' | trim }}|{{ '\\u00a0a\\u2003b'.split() }}|{{ 'a b  c '.split(none, 1) }}|{{ ' a b "
       " c'.rsplit(none, 1) }}|{{ 'é\\u00a0'.strip() }}",
       "x|['a', 'b']|['a', 'b  c ']|[' a b', 'c']|é"},
      {"{{ [1,2,3][2::9223372036854775807] }}|{{ [1,2,3][::-9223372036854775807] }}|{{ [9223372036854775806, 1] | sum "
       "}}",
       "[3]|[3]|9223372036854775807"},
      {"{% set a = 5 %}{% with a = 1, b = a %}{{ a }}{{ b }}{% set c = 3 %}{% endwith %}{{ a }}{{ c }}", "155"},
      {"{% filter upper %}shout{% endfilter %}", "SHOUT"},
      {"{{ [1, 'a', none, true, 1.5, {'k': 'v'}] }}|{{ 1.0 }}|{{ 1e16 }}|{{ 0.1 + 0.2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ "
       "-7 % 3 }}|{{ 7 / 2 }}|{{ 2 ** 10 }}",
       "[1, 'a', None, True, 1.5, {'k': 'v'}]|1.0|1e+16|0.30000000000000004|3|-4|2|3.5|1024"},
      {"{{ 'hello'[1:3] }}|{{ 'hello'[::-1] }}|{{ [1,2,3,4][1:] }}|{{ [1,2,3][-1] }}|{{ 'héllo'[1] }}|{{ 'héllo' | "
       "length }}",
       "el|olleh|[2, 3, 4]|3|é|5"},
      {"{{ 'a' ~ 1 ~ none }}|{{ 'ab' in 'cabd' }}|{{ 3 not in [1,2] }}|{{ 'b' in d }}|{{ 1 < 2 < 3 }}|{{ 'x' if false "
       "else 'y' }}|{{ 'x' if false }}|",
       "a1None|True|True|True|True|y||"},
      {"{{ '  x  '.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'abc'.startswith('ab') }}|{{ "
       "'abc'.endswith(('x','c')) }}|{{ 'Hello World'.upper() }}|{{ 'ab'.replace('a', 'x') }}|{{ '--x--'.lstrip('-') "
       "}}|{{ 'hello world'.title() }}",
       "x|['a', 'b', '', 'c']|['a', 'b']|True|True|HELLO WORLD|xb|x--|Hello World"},
      {"{{ d.get('a') }}|{{ d.get('zz', 'no') }}|{{ d.get('zz') }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d "
       "| length }}",
       "1|no|None|['b', 'a', 'é']|[2, 1, 'ü']|3"},
      {"{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ d | tojson(ensure_ascii=True) }}|{{ d | tojson(sort_keys=True) "
       "}}|{{ [1, [2, {}], []] | tojson(indent=2) }}|{{ 'a\"b\\\\\n' | tojson }}",
       "{\"b\": 2, \"a\": 1, \"é\": \"ü\"}|{\n  \"b\": 2,\n  \"a\": 1,\n  \"é\": \"ü\"\n}|{\"b\": 2, \"a\": 1, "
       "\"\\u00e9\": \"\\u00fc\"}|{\"a\": 1, \"b\": 2, \"é\": \"ü\"}|[\n  1,\n  [\n    2,\n    {}\n  ],\n  "
       "[]\n]|\"a\\\"b\\\\\\n\""},
      {"{{ msgs | map(attribute='role') | join(', ') }}|{{ msgs | selectattr('role', 'equalto', 'user') | list | "
       "length }}|{{ msgs | rejectattr('role', 'equalto', 'user') | map(attribute='content') | first }}|{{ [3,1,2] | "
       "sort }}|{{ ['b','A','a'] | unique | list }}|{{ d | dictsort }}|{{ [1,2] | last }}",
       "user, assistant|1| yo |[1, 2, 3]|['b', 'A']|[('a', 1), ('b', 2), ('é', 'ü')]|2"},
      {"{{ n | default('dflt') }}|{{ undefined_name | default('dflt') }}|{{ '' | default('empty', true) }}|{{ '  t  ' "
       "| trim }}|{{ 'x' | upper }}{{ 'ABC' | lower }}{{ 'hello' | capitalize }}|{{ '42' | int + 1 }}|{{ 'x' | int "
       "}}|{{ '1.5' | float }}|{{ 2.5 | round }}|{{ 3.14159 | round(2) }}|{{ -3 | abs }}",
       "None|dflt|empty|t|XabcHello|43|0|1.5|2.0|3.14|3"},
      {"{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(4, first=true) }}|{{ d | items | list }}|{{ 'abc' | list "
       "}}|{{ {'a': [1]} | string }}|{{ 'x<y' | safe + '<b>' }}|{{ 'x' ~ ('<' | safe) }}",
       "a\n  b\n\n  c|    a\n    b|[('b', 2), ('a', 1), ('é', 'ü')]|['a', 'b', 'c']|{'a': [1]}|x<y&lt;b&gt;|x<"},
      {"{{ x is defined }}{{ n is none }}{{ 1 is number }}{{ true is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ "
       "'a' is string }}{{ d is mapping }}{{ msgs is iterable }}{{ msgs is sequence }}{{ 3 is odd }}{{ 4 is "
       "divisibleby 2 }}{{ n is not none }}{{ true is boolean }}{{ false is false }}",
       "FalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueFalseTrueTrue"},
      {"{{ strftime_now('%d %b %Y') }}", "26 Jul 2026"},
      {"{{ 'a' 'b' }}|{{ \"q'uote\" }}|{{ '\\u00e9\\x41' }}", "ab|q'uote|éA"},
      {"{% set a, b = [1, 2] %}{{ a }}{{ b }}", "12"},
      {"{{ 10 / 4 }}|{{ 1e-5 }}|{{ 123456789.0 * 10 }}|{{ 1/3 }}|{{ -0.0 }}|{{ 2 ** -1 }}|{{ 1_000 }}",
       "2.5|1e-05|1234567890.0|0.3333333333333333|-0.0|0.5|1000"},
      {"{{ {'a': 1, 'b': 'x'} | tojson(separators=(',', ':')) }}|{{ [1.0, 2.5, none, true] | tojson }}",
       "{\"a\":1,\"b\":\"x\"}|[1.0, 2.5, null, true]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    try {
      EXPECT_EQ(render(c.source), c.expected);
    } catch (const TemplateError& e) {
      ADD_FAILURE() << "refused: " << e.what();
    }
  }
}

TEST(JinjaLanguage, FailsWithJinja2sMessage) {
  const std::vector<Case> cases = {
      {"{% macro m(a) %}{{a}}{% endmacro %}{{ m(1, b=2) }}", "macro 'm' takes no keyword argument 'b'"},
      {"{% macro m(a) %}{{a}}{% endmacro %}{{ m(1, 2) }}", "macro 'm' takes not more than 1 argument(s)"},
      {"{% macro m(a) %}{{a}}{{ varargs }}{% endmacro %}{{ m(1, 2, b=3) }}", "macro 'm' takes no keyword argument 'b'"},
      {"{% macro m(a) %}{{a}}{% endmacro %}{{ m(1, a=2) }}", "macro 'm' takes no keyword argument 'a'"},
      {"{{ d.missing.deeper }}", "'dict object' has no attribute 'missing'"},
      {"{{ msgs[0].content.nope() }}", "'str object' has no attribute 'nope'"},
      {"{{ raise_exception('custom refusal') }}", "custom refusal"},
      {"{{ 'a' | nonesuch }}", "No filter named 'nonesuch'."},
      {"{{ [].append(1) }}", "access to attribute 'append' of 'list' object is unsafe."},
      {"{{ msgs | map('upper') | tojson }}", "Object of type generator is not JSON serializable"},
      {"{{ 'a' + d }}", "can only concatenate str (not \"dict\") to str"},
      {"{{ 1 + 'a' }}", "unsupported operand type(s) for +: 'int' and 'str'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source);
    try {
      const std::string out = render(c.source);
      ADD_FAILURE() << "rendered \"" << out << "\"";
    } catch (const TemplateError& e) {
      EXPECT_EQ(std::string(e.what()), c.expected);
      EXPECT_NE(e.kind(), TemplateError::Kind::kSyntax);
    }
  }
}

// A namespace holding itself and a macro held by the scope it closes over
// are reference cycles; the sanitizer build checks that a render frees them.
TEST(JinjaLanguage, CyclesAreFreed) {
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{% macro m() %}{{ ns.me.a }}{% endmacro %}"
                   "{% set ns.m = m %}{{ ns.m() }}{% for i in [2] %}{% macro inner() %}{{ i }}{% endmacro %}"
                   "{% set ns.inner = inner %}{{ ns.inner() }}{% endfor %}"),
            "12");
}

TEST(JinjaLanguage, RaiseExceptionIsItsOwnKind) {
  try {
    render("{{ raise_exception('System role not supported') }}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), TemplateError::Kind::kRaised);
    EXPECT_STREQ(e.what(), "System role not supported");
  }
}

TEST(JinjaLanguage, RefusesWhatDoesNotParse) {
  // Jinja2 refuses these too; the messages are kvgate's, with the line.
  for (const char* source : {"{% for %}", "{% if true %}unclosed", "{% generation %}x{% endgeneration %}",
                             "{{ 'unterminated }}", "{{ x", "{# never closed", "{% if %}{% endif %}", "{{ (1 }}",
                             "{% include 'other.jinja' %}", "{% extends 'base' %}", "{% macro m( %}{% endmacro %}"}) {
    SCOPED_TRACE(source);
    try {
      Template::compile(source);
      FAIL() << "compiled";
    } catch (const TemplateError& e) {
      EXPECT_EQ(e.kind(), TemplateError::Kind::kSyntax);
    }
  }
  try {
    Template::compile("ok\n{% generation %}x{% endgeneration %}");
    FAIL() << "compiled";
  } catch (const TemplateError& e) {
    EXPECT_EQ(std::string(e.what()), "Encountered unknown tag 'generation'. (line 2)");
  }
}

TEST(JinjaLanguage, TheClockIsInjected) {
  RenderOptions o;
  o.clock = [] {
    std::tm tm{};
    tm.tm_year = 2024 - 1900;
    tm.tm_mon = 1;
    tm.tm_mday = 29;
    return tm;
  };
  EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d') }}", o), "2024-02-29");
}

TEST(JinjaLimits, StepsAreBounded) {
  RenderOptions o;
  o.limits.max_steps = 10'000;
  try {
    render("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", o);
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), TemplateError::Kind::kLimit);
    EXPECT_STREQ(e.what(), "the template ran more than 10000 steps");
  }
}

TEST(JinjaLimits, OutputIsBounded) {
  RenderOptions o;
  o.limits.max_output_bytes = 1000;
  for (const char* source :
       {"{{ 'x' * 100000000000 }}", "{% for i in range(2000) %}ab{% endfor %}",
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{{ range(100) | list | tojson(indent=8) }}", "{{ 'y' | indent(5000, true) }}",
        "{{ ('a' * 100).replace('a', 'bbbbbbbbbbbbbbbbbbbb') }}",
        "{{ ('a' * 100) | replace('a', 'bbbbbbbbbbbbbbbbbbbb') }}"}) {
    SCOPED_TRACE(source);
    try {
      render(source, o);
      FAIL();
    } catch (const TemplateError& e) {
      EXPECT_EQ(e.kind(), TemplateError::Kind::kLimit);
      EXPECT_STREQ(e.what(), "the template built a text longer than 1000 bytes");
    }
  }
}

// Each item a loop, a filter, `in` or a method goes over counts, so work on
// big values inside a loop is bounded by the same budget as the loop.
TEST(JinjaLimits, WorkOnBigValuesIsCounted) {
  RenderOptions o;
  o.limits.max_steps = 10'000;
  for (const char* source :
       {"{% set big = range(5000) | list %}{% for i in range(100) %}{% if -1 in big %}{% endif %}{% endfor %}",
        "{% set big = range(5000) | list %}{% for i in range(100) %}{{ big | length }}{% endfor %}",
        "{% set big = 'x' * 4000000 %}{% for i in range(100) %}{{ big.strip() | length }}{% endfor %}",
        "{{ range(9000) | unique | list | length }}"}) {
    SCOPED_TRACE(source);
    try {
      render(source, o);
      FAIL();
    } catch (const TemplateError& e) {
      EXPECT_EQ(e.kind(), TemplateError::Kind::kLimit);
    }
  }
}

TEST(JinjaLimits, ValuesNestBoundedly) {
  try {
    render("{% set ns = namespace(l=[]) %}{% for i in range(300) %}{% set ns.l = [ns.l] %}{% endfor %}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), TemplateError::Kind::kLimit);
    EXPECT_STREQ(e.what(), "the template nests lists and dicts deeper than 256");
  }
  // A namespace that holds itself prints as Python prints it; a long chain
  // of namespaces is Python's RecursionError.
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"), "<Namespace {'me': <Namespace {...}>}>");
  try {
    render(
        "{% set ns = namespace(last=none) %}{% for i in range(600) %}{% set ns.last = namespace(prev=ns.last) %}"
        "{% endfor %}{{ ns }}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_STREQ(e.what(), "maximum recursion depth exceeded while getting the repr of an object");
  }
}

TEST(JinjaLimits, RecursionIsBounded) {
  try {
    render("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), TemplateError::Kind::kLimit);
    EXPECT_STREQ(e.what(), "the template nests macro calls deeper than 64");
  }
}

TEST(JinjaLimits, NestingIsBoundedWhenParsing) {
  for (const std::string& source :
       {"{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}", "{{ " + std::string(5000, '[') + " }}",
        "{{ " + std::string(5000, '-') + "1 }}", "{{ x" + std::string(300, '|') + " }}", [] {
          std::string s;
          for (int i = 0; i < 500; ++i) s += "{% if true %}";
          return s;
        }()}) {
    try {
      Template::compile(source);
      FAIL();
    } catch (const TemplateError& e) {
      EXPECT_EQ(e.kind(), TemplateError::Kind::kSyntax);
    }
  }
}

TEST(JinjaTemplate, OneCompiledTemplateRendersOnManyThreads) {
  const Template t =
      Template::compile("{% for m in msgs %}<{{ m.role }}>{{ m.content | trim }}{% endfor %}{{ d | tojson }}");
  const Value context = language_context();
  RenderOptions o;
  o.clock = fixed_now;
  const std::string want = t.render(context, o);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) got[i] = t.render(context, o);
    });
  for (auto& th : threads) th.join();
  for (const std::string& g : got) EXPECT_EQ(g, want);
}

}  // namespace
}  // namespace kvgate::jinja
