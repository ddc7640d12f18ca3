// tlab/tests/fuzz/make_dict.cc: prints the libFuzzer dictionary for scenario_fuzz.
//
// A dictionary lets the fuzzer splice whole tokens ("\"actors\"", "\"fixed_rate\"")
// instead of finding them a byte at a time. It is generated at build time from the
// sources the loader itself uses, so it cannot go stale:
//   | tokens                      | from                                               |
//   |-----------------------------|----------------------------------------------------|
//   | every property name, every  | scenarios/schema.json (the copy embedded in the    |
//   | enum value, every numeric   | loader, embedded.h)                                |
//   | bound (minimum, maximum...) |                                                    |
//   | strategy, mutant and fault  | core's catalogues (strategy.h, mutant.h,           |
//   | point names                 | fault_point.h), which the semantic pass checks     |
//   | JSON punctuation, literals  | below: the grammar, and numbers at the int64 edge  |
//   | and edge numbers            | that parse_json_text refuses                       |
// Output: one `"token"` per line (libFuzzer's -dict format), sorted, no duplicates.
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/embedded.h"
#include "base/json_input.h"
#include "base/strategies.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace {

using tlab::tool::Json;

// json_string: `s` as a JSON string token ("\"name\"").
std::string json_string(std::string_view s) { return Json(std::string(s)).dump(); }

// dict_line: `token` in libFuzzer's dictionary syntax: quoted, with `"`, `\` and
// non-printable bytes escaped as \xNN.
std::string dict_line(std::string_view token) {
  std::string out = "\"";
  for (unsigned char c : token) {
    if (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// add_schema_tokens: property names, enum values and numeric bounds, found by an
// explicit-stack walk over the whole schema document.
void add_schema_tokens(const Json& schema, std::set<std::string>& tokens) {
  static const std::set<std::string> kBounds{"minimum",          "maximum",  "exclusiveMinimum",
                                             "exclusiveMaximum", "minItems", "maxItems",
                                             "minLength",        "maxLength"};
  std::vector<const Json*> stack{&schema};
  while (!stack.empty()) {
    const Json* j = stack.back();
    stack.pop_back();
    if (j->is_array()) {
      for (const Json& e : *j) stack.push_back(&e);
      continue;
    }
    if (!j->is_object()) continue;
    for (auto it = j->begin(); it != j->end(); ++it) {
      if (it.key() == "properties" && it.value().is_object()) {
        for (auto p = it.value().begin(); p != it.value().end(); ++p)
          tokens.insert(json_string(p.key()));
      } else if (it.key() == "enum" && it.value().is_array()) {
        for (const Json& e : it.value()) tokens.insert(e.dump());
      } else if (kBounds.count(it.key()) && it.value().is_number()) {
        tokens.insert(it.value().dump());
      }
      stack.push_back(&it.value());
    }
  }
}

}  // namespace

int main() {
  std::set<std::string> tokens{"{", "}", "[", "]", ":", ",", "true", "false", "null",
                               // One past each int64 edge and a double overflow: the
                               // parser's own refusals (json_input.h).
                               "9223372036854775808", "-9223372036854775809", "1e400", "0.5", "-0",
                               "\"all\""};
  add_schema_tokens(Json::parse(tlab::tool::embedded_scenario_schema()), tokens);
  for (const tlab::StrategyInfo& s : tlab::kStrategyInfo) tokens.insert(json_string(s.name));
  for (const tlab::MutantInfo& m : tlab::kMutantInfo) tokens.insert(json_string(m.name));
  for (const auto& f : tlab::kFaultPointInfo) tokens.insert(json_string(f.name));
  for (const std::string& t : tokens) std::printf("%s\n", dict_line(t).c_str());
  return 0;
}
