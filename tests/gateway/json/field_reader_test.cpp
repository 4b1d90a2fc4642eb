// The shared field reader (gateway/json/field_reader.h) under its two
// conventions: what each takes as absent, as an integer, and which keys it
// refuses, every refusal through the caller's FieldErrors with the field's path.
#include "gateway/json/field_reader.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>

namespace kvgate::json_fields {
namespace {

namespace json = boost::json;

// A refusal as the test reads it: "<fault> <path>: <detail>".
struct Refused {
  std::string what;
};

class RecordingErrors final : public FieldErrors {
 public:
  [[noreturn]] void missing(const std::string& path) const override { throw Refused{"missing " + path}; }
  [[noreturn]] void wrong_type(const std::string& path, std::string_view expected,
                               std::string_view got) const override {
    throw Refused{"wrong_type " + path + ": expected " + std::string(expected) + ", got " + std::string(got)};
  }
  [[noreturn]] void bad_value(const std::string& path, std::string_view why) const override {
    throw Refused{"bad_value " + path + ": " + std::string(why)};
  }
};

const RecordingErrors kErrors;

template <typename Read>
std::string refusal(Read read) {
  try {
    read();
  } catch (const Refused& r) {
    return r.what;
  }
  return "(accepted)";
}

TEST(FieldReader, UnderTheApiConventionNullIsAbsentAndAWholeNumberIsAnInteger) {
  const json::object o = json::parse(R"({"n": null, "k": 16.0, "x": 1.5, "big": 18446744073709551615})").as_object();
  const FieldReader f(o, "opts", kErrors);
  EXPECT_EQ(f.find("n"), nullptr);
  EXPECT_EQ(f.integer("n"), std::nullopt);
  EXPECT_EQ(f.integer("k"), 16);
  EXPECT_EQ(refusal([&] { f.need("n"); }), "missing opts.n");
  EXPECT_EQ(refusal([&] { f.integer("x"); }), "wrong_type opts.x: expected an integer, got a number");
  EXPECT_EQ(refusal([&] { f.integer("big"); }), "bad_value opts.big: the integer does not fit in 64 bits.");
  EXPECT_EQ(refusal([&] { f.required_string("absent"); }), "missing opts.absent");
}

TEST(FieldReader, UnderTheExactConventionNullIsAValueAndAnIntegerIsWrittenAsOne) {
  const json::object o = json::parse(R"({"n": null, "k": 16.0, "u": 18446744073709551615, "s": ""})").as_object();
  const FieldReader f(o, "", kErrors, Convention::kExact);
  ASSERT_NE(f.find("n"), nullptr);
  EXPECT_EQ(refusal([&] { f.need_string("n"); }), "wrong_type n: expected a string, got null");
  EXPECT_EQ(refusal([&] { f.need_integer("k", 0, 100); }),
            "wrong_type k: expected an integer, got a number with a fraction or exponent");
  EXPECT_EQ(f.need_unsigned("u"), UINT64_MAX);
  EXPECT_EQ(refusal([&] { f.need_integer("u", 0, 100); }), "bad_value u: out of range: 18446744073709551615 is not in [0, 100].");
  EXPECT_EQ(f.need_string("s"), "");
}

TEST(FieldReader, AKeyNoReadAskedForIsRefusedByItsPath) {
  const json::object o = json::parse(R"({"a": 1, "inner": {"b": true, "c": 2}})").as_object();
  const FieldReader f(o, "", kErrors, Convention::kExact);
  EXPECT_EQ(f.need_integer("a", 0, 1), 1);
  const FieldReader inner = f.need_object("inner");
  EXPECT_TRUE(inner.need_boolean("b"));
  EXPECT_EQ(refusal([&] { inner.refuse_unread_keys(); }), "bad_value inner.c: unknown key.");
  EXPECT_EQ(refusal([&] { f.refuse_unread_keys(); }), "(accepted)");
  EXPECT_EQ(refusal([&] { f.need_object("a"); }), "wrong_type a: expected an object, got an integer");
}

TEST(FieldReader, ArrayElementsAreNamedByIndex) {
  const json::value v = json::parse("[0, 7, -1]");
  const json::object empty;
  const FieldReader f(empty, "", kErrors, Convention::kExact);
  const json::array& a = v.as_array();
  EXPECT_EQ(f.integer_in(a[1], index_path("prompt", 1), 0, 10), 7);
  EXPECT_EQ(refusal([&] { f.integer_in(a[2], index_path("prompt", 2), 0, 10); }),
            "bad_value prompt[2]: out of range: -1 is not in [0, 10].");
}

}  // namespace
}  // namespace kvgate::json_fields
