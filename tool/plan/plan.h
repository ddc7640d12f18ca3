// tlab/tool/plan/plan.h: which cases a command runs, and running them through a Runner.
//
// Planning is pure: scenarios + overrides -> CaseSpecs, in a stable order.
//   run    each scenario x (its engine.strategies, or --strategy) x (--mutant or none);
//          with --subject: each scenario once, on the subject ("<scenario>/<subject>")
//   check  each scenario x its strategies with no mutant (must pass), then each
//          (scenario, mutant in catches) x its strategies (must fail on at least one);
//          with --subject only the must-pass cases (core's mutants are not in a subject)
// Execution (execute_plan) hands each spec to the Runner, one at a time, and builds
// the Report. It stops at Ctrl-C (interrupt.h) and marks the report interrupted. For
// a `check` mutant pair it stops at the first strategy that catches the mutant:
// detection, not the full matrix, is what the gate needs.
// With trials (--repeat N) each spec runs N times in a row and its record is the
// fold of them (plan/trials.h): a pair counts as caught only by a case that caught
// it in every trial.
//
// Costs: planning O(cases); execution is the runner's cost per case.
// Ground rules: CLI thread only. The Scenarios must outlive the specs.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.h"
#include "runner/runner.h"
#include "scenario/scenario.h"

namespace tlab::tool {

struct Overrides {
  std::optional<std::string> strategy;  // "all" or one catalogued name
  std::optional<Mutant> mutant;
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> operations;
  std::optional<double> budget_s;
  // --subject: every case runs on this subject (CaseSpec::subject) instead of the
  // engine and strategies the scenario names; `subject_name` is its descriptor's
  // name, used in case ids.
  std::optional<std::string> subject;
  std::string subject_name;
  // --sim: every case runs under deterministic simulation (CaseSpec::sim).
  std::optional<SimSpec> sim;
};

// plan_run: the cases of `tlab run`.
std::vector<CaseSpec> plan_run(const std::vector<Scenario>& scenarios, const Overrides& o);
// plan_check: the cases of `tlab check` (overrides apply to seed/operations/budget).
std::vector<CaseSpec> plan_check(const std::vector<Scenario>& scenarios, const Overrides& o);
// plan_case: one case; the id is "<scenario>/<strategy>[/<mutant>]".
CaseSpec plan_case(const Scenario& s, const std::string& strategy, std::optional<Mutant> mutant,
                   const Overrides& o, bool expect_fail);

struct ExecuteOptions {
  std::string command;         // run | check | replay | compare
  bool show_progress = false;  // a self-overwriting status line (stderr is a terminal)
  // Called after every finished case with the report so far (the CLI rewrites the
  // report file, so a killed run still leaves every finished case on disk).
  std::function<void(const Report&)> on_case_done;
  // Where to write one line per finished case when show_progress is off (so a CI
  // log shows life); nullptr: nowhere.
  std::ostream* log = nullptr;
  // --repeat N: each spec runs N times (1..kMaxTrials) and its record carries the
  // tally (plan/trials.h); unset: once, no tally.
  std::optional<std::uint32_t> trials = std::nullopt;
  // run --until-fail: the round this execution is, copied into the report (also
  // the partial ones on_case_done sees).
  std::optional<UntilFail> until_fail = std::nullopt;
};

// execute_plan: runs `specs` on `runner`; a runner exception becomes verdict error.
Report execute_plan(const std::vector<CaseSpec>& specs, const std::vector<Scenario>& scenarios,
                    Runner& runner, const ExecuteOptions& options);

// parse_duration_s: "5", "5s", "1.5s", "500ms", "250us", "2m" -> seconds; nullopt on
// bad syntax. Does not range-check.
std::optional<double> parse_duration_s(const std::string& text);

}  // namespace tlab::tool
