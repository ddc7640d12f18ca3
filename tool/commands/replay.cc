// tlab/tool/commands/replay.cc: `tlab replay`: re-runs one case of a JSON report
// (--report) from what the report recorded: its scenario document, strategy,
// mutant, seed, operations and budget. Says on stderr whether the recorded
// verdict was reproduced; prints the table (or JSON) of the one case.
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/strategies.h"
#include "cli/common.h"
#include "cli/subject_option.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

namespace {

struct ReplayOptions {
  std::string report;
  std::string case_id;
  OutputOptions outputs;  // --report and --json (no --junit)
};

class ReplayCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description("re-run one case of a report from its recorded seed");
    sub.add_option("REPORT", o_.report, "a JSON report written by --report")
        ->type_name("FILE")
        ->required();
    sub.add_option("--case", o_.case_id, "the case id (default: the only failing case)")
        ->type_name("ID");
    add_outputs(sub, o_.outputs, /*junit=*/false);
    add_example(sub,
                "tlab run scenarios/racing_cancellers.json --report r.json; "
                "tlab replay r.json --case racing_cancellers/binary_heap");
  }

  int run(const CliEnv& env) override {
    InputErrors errors;
    std::optional<std::string> id;
    if (!o_.case_id.empty()) id = o_.case_id;
    auto target = load_replay_target(o_.report, id, errors);
    if (!target) return bad_input(errors, env);
    const ScenarioLoader loader;
    auto scenario =
        loader.load_document(target->scenario_document,
                             o_.report + " (scenario " + target->scenario_source + ")", errors);
    // A subject case (--subject) replays on the same subject spec, probed again.
    std::optional<SubjectFacts> subject;
    if (target->subject_spec) {
      subject = resolve_subject(*target->subject_spec, env);
      if (!subject) return kExitBadInput;
    } else if (!is_strategy(target->strategy)) {
      errors.push_back(
          {o_.report, "/cases",
           fmt::format("case {}: unknown strategy '{}'", target->case_id, target->strategy)});
    }
    std::optional<Mutant> mutant;
    if (target->mutant) {
      mutant = mutant_from_name(*target->mutant);
      if (!mutant) {
        errors.push_back(
            {o_.report, "/cases",
             fmt::format("case {}: unknown mutant '{}'", target->case_id, *target->mutant)});
      }
    }
    check_outputs(o_.outputs, errors);
    if (!errors.empty() || !scenario) return bad_input(errors, env);
    Overrides ov;
    ov.seed = target->seed;
    ov.operations = target->operations;
    ov.budget_s = target->budget_s;
    if (subject) {
      ov.subject = target->subject_spec;
      ov.subject_name = subject->name;
    }
    std::vector<Scenario> scenarios{std::move(*scenario)};
    const std::vector<CaseSpec> specs{
        plan_case(scenarios.front(), target->strategy, mutant, ov, /*expect_fail=*/false)};
    auto runner = runner_or_null(env);
    if (!runner) return kExitInternal;
    ExecuteOptions options;
    options.command = "replay";
    options.show_progress = env.stderr_is_tty;
    Report report = execute_plan(specs, scenarios, *runner, options);
    if (!report.cases.empty()) {
      const std::string now(name_of(report.cases.front().result.verdict));
      *env.err << fmt::format("replay of {}: recorded verdict {}, replayed verdict {} ({})\n",
                              target->case_id, target->recorded_verdict, now,
                              now == target->recorded_verdict ? "reproduced" : "NOT reproduced");
    }
    return finish(report, o_.outputs, env);
  }

 private:
  ReplayOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_replay_command() { return std::make_unique<ReplayCommand>(); }

}  // namespace tlab::tool
