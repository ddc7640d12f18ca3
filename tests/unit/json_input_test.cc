// Tests for tool/base/json_input.h's bounds: the array pass that runs before
// valijson (maxItems, uniqueItems, followed through $ref, additionalProperties and
// items), the innermost-error filter, and cap_errors_per_file. Parsing and the
// scenario schema are covered in scenario_test.cc.
#include "base/json_input.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <fmt/format.h>

namespace tlab::tool {
namespace {

// A small schema with every way check_arrays reaches an array: a property through
// a $ref, additionalProperties, and items of items.
constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "xs": {"$ref": "#/definitions/xs"},
    "grid": {"type": "array", "maxItems": 4, "items": {"$ref": "#/definitions/xs"}},
    "fixed": {"type": "object", "additionalProperties": false},
    "ints": {"type": "object", "additionalProperties": {"type": "integer"}}
  },
  "additionalProperties": {"type": "array", "maxItems": 1},
  "definitions": {
    "xs": {"type": "array", "maxItems": 3, "uniqueItems": true, "items": {"type": "integer"}}
  }
})";

InputErrors validate(const std::string& doc) {
  static const SchemaValidator validator(kSchema);
  InputErrors errors;
  validator.validate(Json::parse(doc), "f.json", errors);
  return errors;
}

// An array past maxItems is one error at the array, however long it is, and its
// elements are not looked at (the 7 strings would each be a type error).
TEST(JsonInputTest, ArrayPastMaxItemsIsOneError) {
  const InputErrors e = validate(R"({"xs": ["a", "b", "c", "d", "e", "f", "g"]})");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].str(), "f.json: /xs: array of 7 items; at most 3 allowed here");
}

// maxItems is found through additionalProperties and through items of items.
TEST(JsonInputTest, MaxItemsFollowsAdditionalPropertiesAndItems) {
  EXPECT_EQ(validate(R"({"other": [1, 2]})").at(0).str(),
            "f.json: /other: array of 2 items; at most 1 allowed here");
  EXPECT_EQ(validate(R"({"grid": [[1], [1, 2, 3, 4]]})").at(0).str(),
            "f.json: /grid/1: array of 4 items; at most 3 allowed here");
}

// Each repeat in a uniqueItems array is one error naming the first occurrence
// (valijson would report every pair); 1 and 1.0 are the same JSON number.
TEST(JsonInputTest, DuplicatesAreOneErrorEachWithTheFirst) {
  const InputErrors e = validate(R"({"xs": [4, 4, 1.0]})");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].str(), "f.json: /xs/1: duplicate of /xs/0");
  const InputErrors f = validate(R"({"xs": [1, 1.0]})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pointer, "/xs/1");
}

// Within bounds, valijson runs and only the innermost error is kept (no wrapper
// at /xs or /), each once.
TEST(JsonInputTest, ValijsonKeepsOnlyInnermostErrors) {
  const InputErrors e = validate(R"({"xs": [1, "two"], "fixed": {"a": 1}})");
  std::set<std::string> pointers;
  for (const InputError& x : e) pointers.insert(x.pointer);
  EXPECT_EQ(pointers, (std::set<std::string>{"/fixed/a", "/xs/1"}));
  EXPECT_EQ(e.size(), 2u);
}

// Thousands of errors (a wrong type under each of 5000 keys) are all kept: the
// filter is not quadratic and drops nothing real.
TEST(JsonInputTest, ManyErrorsAreAllKept) {
  std::string doc = R"({"ints": {)";
  for (int i = 0; i < 5000; ++i) doc += fmt::format("{}\"k{}\": \"x\"", i ? "," : "", i);
  doc += "}}";
  const InputErrors e = validate(doc);
  EXPECT_EQ(e.size(), 5000u);
  EXPECT_EQ(e.at(0).message, "wrong type: string is not allowed here");
}

// cap_errors_per_file keeps the first kMaxErrorsPerFile of each file, in order,
// then one "... and K more errors" line; files keep the order of their first error.
TEST(JsonInputTest, CapErrorsPerFile) {
  InputErrors in;
  for (std::size_t i = 0; i < kMaxErrorsPerFile + 5; ++i) {
    in.push_back({"a.json", fmt::format("/{}", i), "bad"});
    if (i == 1) in.push_back({"b.json", "/", "worse"});
  }
  in.push_back({"a.json", "/last", "bad"});
  const InputErrors out = cap_errors_per_file(in);
  ASSERT_EQ(out.size(), kMaxErrorsPerFile + 2);
  EXPECT_EQ(out[0].str(), "a.json: /0: bad");
  EXPECT_EQ(out[kMaxErrorsPerFile - 1].pointer, fmt::format("/{}", kMaxErrorsPerFile - 1));
  EXPECT_EQ(
      out[kMaxErrorsPerFile].str(),
      fmt::format("a.json: ... and 6 more errors (the first {} are shown)", kMaxErrorsPerFile));
  EXPECT_EQ(out.back().str(), "b.json: /: worse");
  EXPECT_EQ(cap_errors_per_file({{"c.json", "/", "one"}}).size(), 1u);
}

}  // namespace
}  // namespace tlab::tool
