// tlab/tool/plan/plan.h: which cases a command runs, and running them through a Runner.
//
// Planning is pure: scenarios + overrides -> CaseSpecs, in a stable order. Each
// case's target (runner/case_target.h) is resolved here, once (plan_case, through
// subjects/case_targets.h): the engine the roles select, the subject the command
// probed (Overrides::subject), or the built-in subject a scenario's engine.subject
// names (read in this process); a target that cannot run carries its refusal.
//   run    each scenario x (its engine.strategies, or --strategy) x (--mutant or none);
//          with --subject: each scenario once, on the subject ("<scenario>/<subject>")
//   check  each scenario x its strategies with no mutant (must pass), then each
//          (scenario, mutant in catches) x its strategies (must fail on at least one);
//          with --subject only the must-pass cases (core's mutants are not in a subject)
// Execution (execute_plan) hands each spec to the Runner, one at a time, and builds
// the Report. It stops at Ctrl-C (interrupt.h) and marks the report interrupted.
//
// A mutant pair is a detection search, not one run: detection, not the full matrix,
// is what the gate needs, and a gate that one unlucky run can turn red is a coin
// flip in every pipeline that uses it. Its cases (one per strategy, consecutive in
// the plan) run in rounds: round r runs each strategy at seed_for_round(seed, r)
// (round 1: the scenario's own seed), and the search stops at the first case that
// catches the mutant, or after ExecuteOptions::search_rounds rounds.
//   | pair's engine        | runs                     | a search is                     |
//   |----------------------|--------------------------|---------------------------------|
//   | runs under --sim     | simulated (check: always;| a fixed list of seeds: the same |
//   | (subjects.h)         | Overrides::simulate_     | answer on every machine, so the |
//   |                      | mutants)                 | gate cannot flake               |
//   | real threads only    | real threads             | up to search_rounds independent |
//   |                      |                          | runs per strategy: a pair caught|
//   |                      |                          | with probability p per run is   |
//   |                      |                          | missed with (1 - p)^(rounds x   |
//   |                      |                          | strategies)                     |
// The record of each strategy that ran is its catching run, or its last; its
// duration is the sum over its rounds, and search_rounds says how many it ran.
// With trials (--repeat N) each spec runs N times in a row and its record is the
// fold of them (plan/trials.h): a pair counts as caught only by a case that caught
// it in every trial. Trials measure one run's detection, so they run no search.
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
#include "subjects/subject_facts.h"

namespace tlab::tool {

struct Overrides {
  std::optional<std::string> strategy;  // "all" or one catalogued name
  std::optional<Mutant> mutant;
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> operations;
  std::optional<double> budget_s;
  // --subject, as the command probed it (subjects/plugin.h probe_subject): every
  // case runs on this subject (CaseSpec::subject is its spec) instead of the engine
  // and strategies the scenario names; its descriptor's name is used in case ids.
  std::optional<SubjectFacts> subject;
  // --sim: every case runs under deterministic simulation (CaseSpec::sim).
  std::optional<SimSpec> sim;
  // plan_check: a mutant case of `catches` whose engine runs under simulation
  // (subjects.h, sim_refusal) is simulated (random walk), so its detection does
  // not depend on the machine's load, unless the mutant acts only where
  // simulation never goes (mutant_under_sim). tsan_catches stay on real threads (a data
  // race needs two threads at once). sim_catches are planned only where the case
  // is simulated (this flag, or --sim).
  bool simulate_mutants = false;
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
  // The rounds of a mutant pair's detection search (above); 1: one run per
  // strategy, as `--attempts 1`. Ignored with trials.
  std::uint32_t search_rounds = 1;
};

// kDefaultSearchRounds: check's and the kill matrix scenario layer's default. A
// real-thread pair caught by a single run with probability p >= 1/2 on a loaded
// machine (the weakest seen: 9 of 10 under load 10 on 2 cores) is missed by a
// search over one strategy with probability (1 - p)^10 <= 2^-10, and over five
// strategies <= 2^-50; a simulated pair's answer is fixed. A real survivor costs
// ten runs per strategy before the gate says so.
inline constexpr std::uint32_t kDefaultSearchRounds = 10;

// execute_plan: runs `specs` on `runner`; a runner exception becomes verdict error.
Report execute_plan(const std::vector<CaseSpec>& specs, const std::vector<Scenario>& scenarios,
                    Runner& runner, const ExecuteOptions& options);

// parse_duration_s: "5", "5s", "1.5s", "500ms", "250us", "2m" -> seconds; nullopt on
// bad syntax. Does not range-check.
std::optional<double> parse_duration_s(const std::string& text);

}  // namespace tlab::tool
