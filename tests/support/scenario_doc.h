// tests/support/scenario_doc.h: a scenario for a unit test, from a JSON document
// written in the test, through the real loader (so it is as valid as a file).
//
// Cost: one load. Ground rules: throws std::runtime_error with the loader's first
// error, so a malformed fixture fails the test that built it.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/scenario.h"

namespace tlab::testing {

inline tool::Scenario scenario_from(const nlohmann::json& doc) {
  static const tool::ScenarioLoader loader;
  tool::InputErrors errors;
  auto s = loader.load_document(doc, doc.at("name").get<std::string>() + ".json", errors);
  if (!s) throw std::runtime_error(errors.front().str());
  return *s;
}

// waiter_scenario: the smallest timer-service scenario: one waiter, two strategies,
// seed 3, 50 operations, catching `catches`.
inline tool::Scenario waiter_scenario(const std::string& name,
                                      const std::string& catches = "token_flag_only") {
  return scenario_from(
      {{"name", name},
       {"description", "a unit test's scenario"},
       {"engine", {{"strategies", {"binary_heap", "hashed_wheel"}}}},
       {"actors", {{{"role", "waiter"}, {"count", 1}, {"timeout_us", {{"fixed", 100}}}}}},
       {"run", {{"operations", 50}, {"budget_s", 2}, {"seed", 3}}},
       {"catches", {catches}}});
}

}  // namespace tlab::testing
