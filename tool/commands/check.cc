// tlab/tool/commands/check.cc: `tlab check`, the CI gate: every scenario on every
// strategy must pass and each of its listed mutants must fail (a survivor exits
// 1). With --subject, the scenarios that subject can play run on it, must pass,
// and no mutant is planned (core's mutants are not in a subject). With --models, the Relacy models (clean and mutant runs) and the property
// and TSan layers that are built join in (layers/layers.h), and the gate also
// fails when a mutant is caught by no layer at all.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/subject_option.h"
#include "layers/kill_matrix.h"
#include "layers/layers.h"

namespace tlab::tool {

namespace {

struct CheckOptions {
  std::vector<std::string> paths;
  bool with_models = false;
  std::string subject;
  LayerSources sources;
  OutputOptions outputs;
};

class CheckCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description("CI gate: the suite on every strategy must pass; each listed mutant must fail");
    sub.add_option("PATHS", o_.paths, "scenario files or directories")->type_name("PATH");
    sub.add_flag("--models", o_.with_models,
                 "also run the Relacy models (clean and mutant runs) and the property and TSan "
                 "layers that are built; fail if any mutant is caught by no layer");
    add_subject_option(sub, o_.subject);
    add_layer_sources(sub, o_.sources);
    add_layer_binaries(sub, o_.sources);
    // The models and layers check core's code; a subject is the user's.
    sub.get_option("--subject")->excludes("--models");
    add_outputs(sub, o_.outputs, /*junit=*/true);
    add_example(sub, "tlab check --junit check.xml");
  }

  int run(const CliEnv& env) override {
    Overrides ov;
    std::optional<SubjectFacts> subject;
    if (!o_.subject.empty()) {
      subject = resolve_subject(o_.subject, env);
      if (!subject) return kExitBadInput;
      ov.subject = o_.subject;
      ov.subject_name = subject->name;
      if (!o_.outputs.json) *env.err << "tlab: checking " << describe_subject(*subject) << "\n";
    }
    ScenarioRun r = run_scenarios(
        "check", o_.paths, [&](const std::vector<Scenario>& s) { return plan_check(s, ov); },
        o_.outputs, env, subject ? &*subject : nullptr);
    if (r.exit) return *r.exit;
    Report& report = r.report;
    if (!o_.with_models || report.interrupted) return finish(report, o_.outputs, env);
    // --models: the models' clean and mutant runs join the report, and the gate
    // also fails when a mutant is caught by no layer at all.
    KillMatrix matrix;
    LayerStatus& st = matrix.layer(Layer::kScenario);
    st.state = LayerStatus::State::kRan;
    st.source = "tlab check: the scenarios given";
    st.checks = report.summary().mutant_pairs;
    for (const CaseRecord& c : report.cases) st.seconds += c.result.duration_s;
    add_scenario_cases(matrix, report.cases, r.scenarios);
    LayerPlan plan;
    plan.sources = o_.sources;
    plan.model.jobs = model_jobs(o_.sources.jobs);
    plan.progress = env.stderr_is_tty ? env.err : nullptr;
    run_other_layers(matrix, r.scenarios, plan, /*clean_models=*/true, report);
    const int code = finish(report, o_.outputs, env);
    if (!o_.outputs.json) *env.out << "\n" << matrix.table();
    if (code == kExitInterrupted || code == kExitInternal) return code;
    return std::max(code, matrix.exit_code());
  }

 private:
  CheckOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_check_command() { return std::make_unique<CheckCommand>(); }

}  // namespace tlab::tool
