// The Jinja language as Jinja2 (configured as Hugging Face configures it)
// runs it: each expectation here was checked against Python's Jinja2 3.1.
#include <gtest/gtest.h>

#include <string>

#include "gateway/template/template.h"

namespace kvgate::jinja {
namespace {

std::string render(const std::string& source, const Value& context = Value::dict()) {
  return Template::compile(source).render(context);
}

TEST(JinjaLanguage, Placeholder) { EXPECT_EQ(render("a{{ 1 + 2 }}b"), "a3b"); }

}  // namespace
}  // namespace kvgate::jinja
