// tests/subjects/subject_case.h: how the generic driver's tests run one scenario
// case on a subject library: in this process (run_on: run_subject_engine with the
// subject's opener, then judge() with the subject's promises, as the runner does)
// or through the real stress runner (run_in_runner: a forked child with its
// watchdog, the case's target resolved as plan_case resolves it).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "oracles/oracles.h"
#include "runner/case_context.h"
#include "runner/engine_subject.h"
#include "runner/stress_runner.h"
#include "scenario/scenario.h"
#include "subjects/case_targets.h"
#include "subjects/plugin.h"
#include "types/case_result.h"

namespace tlab::tool::subject_case {

struct Ran {
  CaseResult r;
  std::string error;  // a driver error (what the child harness turns into verdict error)
};

inline std::string scenario_path(const std::string& name) {
  return std::string(TLAB_SOURCE_DIR) + "/scenarios/" + name + ".json";
}

inline Scenario load_path(const std::string& path) {
  ScenarioLoader loader;
  InputErrors errors;
  std::optional<Scenario> s = loader.load_file(path, errors);
  EXPECT_TRUE(s.has_value()) << (errors.empty() ? "" : errors[0].message);
  return s.value_or(Scenario{});
}

inline Scenario load(const std::string& name) {
  ScenarioLoader loader;
  InputErrors errors;
  std::optional<Scenario> s = loader.load_file(scenario_path(name), errors);
  EXPECT_TRUE(s.has_value()) << (errors.empty() ? "" : errors[0].message);
  return s.value_or(Scenario{});
}

inline Scenario load_text(const std::string& text) {
  ScenarioLoader loader;
  InputErrors errors;
  std::optional<Scenario> s = loader.load_text(text, "inline", errors);
  EXPECT_TRUE(s.has_value()) << (errors.empty() ? "" : errors[0].message);
  return s.value_or(Scenario{});
}

// The case of `sc` on the subject library `so`, as the CLI plans it.
inline CaseSpec spec_of(const Scenario& sc, const std::string& so, double budget_s) {
  CaseSpec spec;
  spec.id = sc.name + "/" + so;
  spec.scenario = &sc;
  spec.strategy = "binary_heap";
  spec.seed = sc.run.seed;
  spec.operations = sc.run.operations;
  spec.budget_s = budget_s;
  spec.subject = so;
  return spec;
}

// Runs `sc` on the subject library `so` in this process and judges the result
// against the subject's promises.
inline Ran run_on(const Scenario& sc, const std::string& so) {
  const CaseSpec spec = spec_of(sc, so, sc.run.budget_s);
  runner::CaseContext ctx(spec, runner::steady_ns());
  Ran out;
  try {
    runner::run_subject_engine(ctx, subject_opener(so));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  out.r = ctx.snapshot(Verdict::kPass, "", out.error.empty());
  std::string err;
  const tlab_subject* d = open_subject(so, err);
  EXPECT_NE(d, nullptr) << err;
  if (d != nullptr) judge(sc.expect, promises_of_abi(d->promises), out.r, false);
  return out;
}

inline std::string summary(const Ran& ran) {
  std::string s = std::string(name_of(ran.r.verdict)) + " " + ran.error + " " + ran.r.message;
  for (const auto& [key, v] : ran.r.violations) {
    s += "\n  " + key + "=" + std::to_string(v.count) + ": " + v.first_example;
  }
  return s;
}

inline std::uint64_t count_of(const Ran& ran, const std::string& key) {
  auto it = ran.r.violations.find(key);
  return it == ran.r.violations.end() ? 0 : it->second.count;
}

// expect_quiet: none of `oracles` counted a finding in `ran` (each miss names the
// oracle and the case).
inline void expect_quiet(const Ran& ran, std::initializer_list<const char*> oracles) {
  for (const char* o : oracles) EXPECT_EQ(count_of(ran, o), 0u) << o << ": " << summary(ran);
}

inline std::uint64_t counter(const Ran& ran, const std::string& key) {
  auto it = ran.r.counters.find(key);
  return it == ran.r.counters.end() ? 0 : it->second;
}

// Runs `sc` on the subject library `so` through the real stress runner (a forked
// case child, its watchdog, the parent's judge) with a budget of `budget_s`.
inline CaseResult run_in_runner(const Scenario& sc, const std::string& so, double budget_s) {
  CaseSpec spec = spec_of(sc, so, budget_s);
  spec.target = subject_target(so);  // as plan_case resolves it (plan/plan.h)
  StressRunner runner;
  return runner.run_case(spec, RunContext{});
}

}  // namespace tlab::tool::subject_case
