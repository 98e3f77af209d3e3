#include "dyno/reports/json_fields.h"

#include <cmath>

#include <gtest/gtest.h>

#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;

const nlohmann::json kObject = nlohmann::json::parse(R"({"name": "a", "n": 3, "x": 2.5, "on": true, "list": [1, null], "nested": {"k": 1}, "gone": null})");

// A required field that is absent is said to be missing (a const object has no entry to show).
TEST(JsonFields, FailingOnAMissingFieldSaysItIsMissing) {
  const nlohmann::json object = {{"a", 1}};
  const JsonFields fields(object, "x", "'f.json'");
  EXPECT_EQ(testing::error_of([&] { fields.fail("b", "a number"); }), "[x] 'f.json': field 'b' is missing; expected a number");
}

TEST(JsonFields, ReadsTypedFieldsWithFallbacksForAbsentAndNull) {
  const JsonFields f(kObject, "report", "'r.json'");
  EXPECT_EQ(f.text("name"), "a");
  EXPECT_EQ(f.integer("n"), 3);
  EXPECT_EQ(f.number("x"), 2.5);
  EXPECT_TRUE(f.flag("on"));
  EXPECT_EQ(f.text("missing", "fallback"), "fallback");
  EXPECT_EQ(f.integer("gone", 7), 7);
  const auto list = f.numbers("list");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], 1);
  EXPECT_TRUE(std::isnan(list[1]));
  EXPECT_EQ(f.object("nested").integer("k"), 1);
  EXPECT_TRUE(f.object("absent").json().empty());
}

TEST(JsonFields, AWrongTypeNamesTheFieldTheValueAndTheTypeExpected) {
  const JsonFields f(kObject, "report", "'r.json'");
  EXPECT_EQ(error_of([&] { f.integer("name"); }), "[report] 'r.json': field 'name' is \"a\"; expected an integer");
  EXPECT_EQ(error_of([&] { f.integer("x"); }), "[report] 'r.json': field 'x' is 2.5; expected an integer");
  EXPECT_EQ(error_of([&] { f.text("n"); }), "[report] 'r.json': field 'n' is 3; expected a string");
  EXPECT_EQ(error_of([&] { f.flag("n"); }), "[report] 'r.json': field 'n' is 3; expected true or false");
  EXPECT_EQ(error_of([&] { f.numbers("nested"); }), "[report] 'r.json': field 'nested' is {\"k\":1}; expected an array of numbers");
  EXPECT_EQ(error_of([&] { f.object("list"); }), "[report] 'r.json': field 'list' is [1,null]; expected an object");
  EXPECT_EQ(error_of([&] { f.required("gone"); }), "[report] 'r.json' has no field 'gone'");
  EXPECT_EQ(error_of([] { JsonFields(nlohmann::json::array(), "journal", "line 2"); }), "[journal] line 2 is []; expected a JSON object");
}

TEST(JsonFields, AnIntegerOutsideInt64IsAWrongType) {
  const auto j = nlohmann::json::parse(R"({"big": 18446744073709551615, "huge": 1e30, "whole": 4.0})");
  const JsonFields f(j, "report", "r");
  EXPECT_EQ(f.integer("whole"), 4);
  EXPECT_NE(error_of([&] { f.integer("big"); }), "");
  EXPECT_NE(error_of([&] { f.integer("huge"); }), "");
}

TEST(JsonFields, AFieldOutsideTheValidOnesIsNamedWithTheValidOnes) {
  const nlohmann::json j = {{"min", 1}, {"max", 4}, {"stride", 2}};
  EXPECT_EQ(error_of([&] { JsonFields(j, "space", "axis threads").only({"min", "max", "step"}); }),
            "[space] axis threads: unknown field 'stride' (valid: min, max, step)");
  JsonFields(j, "space", "axis threads").only({"min", "max", "stride"});  // all valid: no error
}

TEST(JsonFields, Utf8Validity) {
  EXPECT_TRUE(valid_utf8("b\xc3\xa9"));
  EXPECT_FALSE(valid_utf8("b\xff"));
  EXPECT_FALSE(valid_utf8("\xc3"));
}

}  // namespace
}  // namespace dyno
