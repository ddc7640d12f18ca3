// tlab/tool/runner/runner.h: the seam between the CLI and the stress runner.
//
// The CLI (cli.h) turns options and scenario files into CaseSpecs (plan.h), each
// with its target resolved (case_target.h), asks a Runner to execute each, and
// turns the CaseResults into reports. Everything on this side of the seam is
// independent of the engine's internals; the Runner is the only thing that
// instantiates core/ on StressPlatform. A case is one (scenario x strategy x
// mutant) with a seed and budget:
//
//   | CaseSpec field | meaning                                                                |
//   | scenario       | validated; every field is in range (scenario.h)                        |
//   | strategy       | one name from the strategy catalogue                                   |
//   | mutant         | nullopt for the real code, else the one mutant to turn on              |
//   | seed           | the scenario seed or --seed; per-thread RNGs derive from it            |
//   | operations     | run.operations or --operations                                         |
//   | budget_s       | run.budget_s or --budget: the watchdog, never a pass limit             |
//   | subject        | --subject or engine.subject, as given (the report keeps it for replay) |
//   | sim            | --sim: deterministic simulation (types/sim_spec.h), or real threads    |
//   | target         | what the case runs on, resolved when it was planned (case_target.h)    |
//
// Verdicts (the runner picks one per case):
//   | verdict     | when                                                  | exit code |
//   | pass        | every expectation held                                | 0         |
//   | fail        | an oracle exceeded its expect bound, or a TSan report | 1         |
//   | error       | the runner itself failed (exception, setup)           | 3         |
//   | timeout     | the budget expired; `message` holds the actor states  | 3         |
//   | interrupted | Ctrl-C (interrupt.h) stopped it part-way              | 130       |
//
// Ground rules: Runner::run_case is called from the CLI's thread, one case at a
// time; it owns every thread it starts and joins them before returning, also on
// timeout and interruption. It must poll interrupted() (interrupt.h) and return
// promptly (verdict interrupted) once it is set. It must not write to stdout; it
// may report progress only through the callback in RunContext.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/case_target.h"
#include "scenario/scenario.h"
#include "tlab/platform/mutant.h"
#include "types/case_result.h"
#include "types/sim_spec.h"

namespace tlab::tool {

struct CaseSpec {
  std::string id;  // "<scenario>/<strategy>" or "<scenario>/<strategy>/<mutant>"
  const Scenario* scenario = nullptr;  // owned by the caller; outlives the run
  std::string strategy;
  std::optional<Mutant> mutant;
  std::uint64_t seed = 1;
  std::uint64_t operations = 1;
  double budget_s = 1.0;
  // True for `tlab check`'s mutant cases: the case exists to prove `mutant` is
  // caught, so its failing is the good outcome.
  bool expect_fail = false;
  // Non-empty: the case runs on this subject through the generic ABI driver
  // (runner/engine_subject.h) instead of the engine its roles select: a subject
  // table row with an ABI (`libuv`, `binary_heap`), `PATH.so[:entry]`
  // (subjects/plugin.h) or `exec:CMD`. The id is then "<scenario>/<subject name>".
  // The runner does not read it (`target` holds what it resolved to); the report
  // keeps it for replay.
  std::string subject;
  // Set: the case runs under deterministic simulation (types/sim_spec.h) instead
  // of on real threads; the engine must support it (subjects.h, SubjectInfo::sim).
  std::optional<SimSpec> sim;
  // What the case runs on: the driver, the names and the promises judged, or why
  // it cannot run (case_target.h); plan_case (plan/plan.h) resolves it.
  CaseTarget target;
};

struct RunContext {
  // Called by the runner with a short status line ("412000/1000000 ops"); may be
  // empty. The CLI shows it on stderr when stderr is a TTY.
  std::function<void(const std::string&)> progress;
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Runner::run_case: runs one case to completion, timeout or interruption.
  // Requires: spec.scenario != nullptr. Ensures: every thread started is joined.
  // Thread safety: one call at a time.
  virtual CaseResult run_case(const CaseSpec& spec, const RunContext& context) = 0;
};

// RunnerFactory: how the CLI obtains a runner. Returns nullptr when this build has
// no runner; the CLI then exits 3 ("runner not built yet").
using RunnerFactory = std::function<std::unique_ptr<Runner>()>;

}  // namespace tlab::tool
