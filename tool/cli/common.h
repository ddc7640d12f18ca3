// tlab/tool/cli/common.h: the plumbing two or more tlab commands share (command.h):
// output flags and their checks, writing the report and printing the table, bad
// input, the runner, the built-in suite, option validators, and the one
// load-plan-execute path of `run` and `check`.
//
// What one command alone uses lives in that command's file (tool/commands/).
// Messages printed here are part of the CLI's contract (tests/e2e match them).
//
// Cost: what the callers ask for; run_scenarios is dominated by the runner.
// Ground rules: CLI thread only.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/json_input.h"
#include "base/strategies.h"
#include "cli/command.h"
#include "layers/layers.h"
#include "plan/plan.h"
#include "plan/shard.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "subjects/plugin.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace tlab::tool {

// --budget and --timeout accept durations up to this many seconds.
inline constexpr double kMaxDurationS = 600;

// duration_check: the CLI11 validator of a duration in (0, kMaxDurationS].
CLI::Validator duration_check();
// mutant_check: the CLI11 validator of a mutant name (no list in --help: `tlab
// list mutants` has it).
CLI::Validator mutant_check();

// add_example: ends the help footer of `sub` (the tool's exit codes line, unless
// the command set its own) with "Example: <example>", a command line that works
// from the source tree.
void add_example(CLI::App& sub, const std::string& example);

// SimOptions: --sim random|pct and --pct-depth N (types/sim_spec.h).
struct SimOptions {
  std::string strategy;  // empty: real threads
  int pct_depth = 3;
};
// add_sim_options: adds --sim and --pct-depth (which needs --sim) bound to `o`.
void add_sim_options(CLI::App& sub, SimOptions& o);
// sim_spec_of: the SimSpec `o` asks for (nullopt without --sim); appends an error
// for --pct-depth without --sim pct.
std::optional<SimSpec> sim_spec_of(const CLI::App& sub, const SimOptions& o, InputErrors& errors);

// OutputOptions: --report F, --junit F, --sarif F, --html F, --json, --fail-on.
struct OutputOptions {
  std::string report_path;
  std::string junit_path;
  std::string sarif_path;  // report/sarif.h
  std::string html_path;   // report/html_report.h
  bool json = false;
  // --fail-on: findings (oracle names, or "any") that fail a passed case although
  // its subject does not promise them (fail_on_findings).
  std::vector<std::string> fail_on;
  // -v (run and check, with --subject): list each built-in scenario the subject
  // cannot play instead of counting them (subject_option.h add_verbose_option).
  bool verbose = false;
};
// add_outputs: adds --report, --junit (if `junit`), add_ci_outputs, --json and
// --fail-on bound to `o`.
void add_outputs(CLI::App& sub, OutputOptions& o, bool junit);
// add_ci_outputs: adds --sarif and --html bound to `o`.
void add_ci_outputs(CLI::App& sub, OutputOptions& o);
// write_ci_outputs: writes --sarif and --html, and under GitHub Actions prints the
// annotations on env's err and appends the step summary (report/github.h).
// Throws std::system_error (or std::runtime_error) when a file cannot be written.
void write_ci_outputs(const Report& report, const OutputOptions& o, const CliEnv& env);

// check_outputs: each named (flag, path) pair with a non-empty path can be
// created, and no two flags name the same file; appends an error per problem.
// Returns whether `errors` is empty.
bool check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                   InputErrors& errors);
// check_outputs: --report, --junit, --sarif and --html of `o`.
bool check_outputs(const OutputOptions& o, InputErrors& errors);

// add_layer_sources: adds --models-dir and --jobs.
void add_layer_sources(CLI::App& sub, LayerSources& s);
// add_layer_binaries: adds --property-bin and --tsan-tlab.
void add_layer_binaries(CLI::App& sub, LayerSources& s);

// bad_input: prints the errors on env's err, one a line, at most kMaxErrorsPerFile a
// file (cap_errors_per_file). Returns kExitBadInput.
int bad_input(const InputErrors& errors, const CliEnv& env);

// runner_or_null: env's runner, or nullptr after saying on err that this build
// has none (the caller returns kExitInternal).
std::unique_ptr<Runner> runner_or_null(const CliEnv& env);

// load_builtin_suite: the suite embedded in this build, or nullopt after printing
// why it does not validate (an internal error: the caller returns kExitInternal).
std::optional<std::vector<Scenario>> load_builtin_suite(const ScenarioLoader& loader,
                                                        const CliEnv& env);

// fail_on_findings: `report` with every passed case (not a mutant's) that has an
// unpromised finding named in `names` ("any": every one) turned into a failure,
// its message saying which and why. Unchanged when `names` is empty.
Report fail_on_findings(Report report, const std::vector<std::string>& names);

// finish: applies --fail-on (fail_on_findings); writes --report and --junit, then
// write_ci_outputs; prints the JSON
// (--json) or the table on out, and says on err where an interrupted run's partial
// report is. Returns the report's exit code, or kExitInternal if a file could not
// be written.
int finish(const Report& report, const OutputOptions& o, const CliEnv& env);

// ScenarioRun: the outcome of run_scenarios.
// load_runnable: ScenarioLoader::load_paths plus check_runnable (subjects.h): the
// scenarios that load and that some engine can run as written; errors for the rest
// (`tlab validate`, run, check and compare all load through here, so validate and
// run agree).
std::vector<Scenario> load_runnable(const ScenarioLoader& loader,
                                    const std::vector<std::string>& paths, InputErrors& errors);

// Repetition: how often run_scenarios executes the plan (plan/trials.h).
struct Repetition {
  // check --repeat N: every case runs N times, folded into one record.
  std::optional<std::uint32_t> trials;
  // run --until-fail N: the whole plan runs up to N rounds, stopping after the
  // first round whose report does not exit 0; with vary_seed, round r runs each
  // case at seed_for_round(seed, r).
  std::optional<std::uint32_t> rounds;
  bool vary_seed = false;
  // check: the rounds of each mutant pair's detection search (plan.h).
  std::uint32_t search_rounds = 1;
};

struct ScenarioRun {
  std::optional<int> exit;  // set when it ended before running: bad input, no runner
  std::vector<Scenario> scenarios;
  Report report;  // the executed plan (its last round), when `exit` is unset
};
// run_scenarios: what `run` and `check` share. Loads `paths` (none: the built-in
// suite; a Ctrl-C while loading ends it with exit 130, nothing run), checks the
// outputs, plans with `plan`, and executes the plan through the runner as
// `command`, rewriting --report after every case so that a killed run leaves its
// finished cases on disk. The caller finishes.
// With `subject` (--subject), the scenarios are those it can play
// (subject_option.h: named files it cannot play are bad input). `repeat` runs
// trials or rounds (Repetition); each round after a clean one says so on err.
// With `sim` (--sim), the scenarios are those whose engine runs under simulation
// (subjects.h, SubjectInfo::sim_refusal): the built-in suite's others are skipped
// with a line on err naming each and why; a named file that cannot is bad input.
// With `shard` (cli/shard_option.h), only that shard's cases of the plan run and
// the report records the shard (plan/shard_plan.h).
ScenarioRun run_scenarios(
    const std::string& command, const std::vector<std::string>& paths,
    const std::function<std::vector<CaseSpec>(const std::vector<Scenario>&)>& plan,
    const OutputOptions& o, const CliEnv& env, const SubjectFacts* subject = nullptr,
    const Repetition& repeat = {}, const std::optional<SimSpec>& sim = std::nullopt,
    const std::optional<Shard>& shard = std::nullopt);

}  // namespace tlab::tool
