// tlab/tool/commands/check.cc: `tlab check`, the CI gate: every scenario on every
// strategy must pass and each of its listed mutants must fail (a survivor exits
// 1). With --subject, the scenarios that subject can play run on it, must pass,
// and no mutant is planned (core's mutants are not in a subject); a subject on
// tlab's clock also runs the property layer (layers/subject_property_run.h). With --models, the
// Relacy models (clean and mutant runs) and the property and TSan layers that are built join in
// (layers/layers.h), and the gate also fails when a mutant is caught by no layer at all.
//
// A listed mutant is caught by a detection search (plan/plan.h): its cases run
// under deterministic simulation when the scenario's engine can (so the answer is
// the same on every machine, however loaded), else on real threads, in up to
// --search-rounds rounds over the scenario's strategies, each round at a fresh
// seed, stopping at the first catch. A gate that one unlucky run turns red is a
// coin flip in every pipeline that runs it.
//
// --repeat N measures what one run only samples: every scenario case runs N
// times (plan/trials.h) and its row says "failed k/N" (plain) or "detected k/N"
// with the median detect_us (mutant): one run's detection, so with --repeat a
// mutant case runs no search. The gate is strict, so CI is green only
// when detection is certain over the trials: a plain case passes only if all N
// passed, a mutant counts as caught only by a case that caught it N/N. The
// property layer (deterministic under --property-seed) and the --models layers
// run once.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/shard_option.h"
#include "cli/subject_option.h"
#include "layers/kill_matrix.h"
#include "layers/layers.h"
#include "layers/subject_property_run.h"
#include "plan/shard_plan.h"
#include "plan/trials.h"

namespace tlab::tool {

namespace {

// The property layer's time limit on a subject: far beyond the seconds a
// healthy run takes; a subject that hangs inside a call gets verdict timeout.
constexpr double kPropertyLimitS = 120;

struct CheckOptions {
  std::vector<std::string> paths;
  bool with_models = false;
  std::string subject;
  std::uint64_t property_seed = 1;
  int property_tests = kDefaultPropertyTests;
  std::uint32_t repeat = 1;
  std::uint32_t search_rounds = kDefaultSearchRounds;
  SimOptions sim;
  LayerSources sources;
  std::string shard;
  OutputOptions outputs;
};

class CheckCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub_ = &sub;
    sub.description("CI gate: the suite on every strategy must pass; each listed mutant must fail");
    sub.add_option("PATHS", o_.paths, "scenario files or directories")->type_name("PATH");
    sub.add_flag("--models", o_.with_models,
                 "also run the Relacy models (clean and mutant runs) and the property and TSan "
                 "layers that are built; fail if any mutant is caught by no layer");
    add_subject_option(sub, o_.subject);
    sub.add_option("--property-seed", o_.property_seed,
                   "with --subject: the property layer's seed (default 1)")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{0}, (std::uint64_t{1} << 53) - 1))
        ->needs("--subject");
    sub.add_option("--property-tests", o_.property_tests,
                   fmt::format("with --subject: random ABI call sequences the property layer "
                               "tries (default {})",
                               kDefaultPropertyTests))
        ->type_name("N")
        ->check(CLI::Range(1, 100000))
        ->needs("--subject");
    sub.add_option("--repeat", o_.repeat,
                   "run every scenario case N times; a case passes (or catches its mutant) "
                   "only if all N do; rows show failed/detected k/N")
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    sub.add_option("--search-rounds", o_.search_rounds,
                   fmt::format("search for each listed mutant in up to N rounds over its "
                               "strategies, each at a fresh seed; it survives only if no round "
                               "catches it (default {}; 1: one run per strategy)",
                               kDefaultSearchRounds))
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    add_layer_sources(sub, o_.sources);
    add_layer_binaries(sub, o_.sources);
    // The models and layers check core's code; a subject is the user's.
    sub.get_option("--subject")->excludes("--models");
    add_sim_options(sub, o_.sim);
    sub.get_option("--sim")->excludes("--subject");
    add_shard_option(sub, o_.shard);
    // The other layers are not sharded: `tlab model --shard` splits the models.
    sub.get_option("--shard")->excludes("--models");
    add_outputs(sub, o_.outputs, /*junit=*/true);
    add_verbose_option(sub, o_.outputs.verbose);
    add_example(sub, "tlab check --junit check.xml");
  }

  int run(const CliEnv& env) override {
    Overrides ov;
    InputErrors errors;
    ov.sim = sim_spec_of(*sub_, o_.sim, errors);
    ov.simulate_mutants = true;
    if (!errors.empty()) return bad_input(errors, env);
    std::optional<SubjectFacts> subject;
    if (!subject_overrides(o_.subject, env, ov, subject)) return kExitBadInput;
    if (subject && !o_.outputs.json) {
      *env.err << "tlab: checking " << describe_subject(*subject) << "\n";
    }
    Repetition repeat;
    if (sub_->count("--repeat") > 0) repeat.trials = o_.repeat;
    repeat.search_rounds = o_.search_rounds;
    std::optional<Shard> shard;
    if (auto stop = resolve_shard_option(*sub_, o_.shard, env, shard)) return *stop;
    if (shard && o_.with_models) {
      return bad_input({{shard->source, "/",
                         "--models is not sharded; split the models with `tlab model --shard`"}},
                       env);
    }
    ScenarioRun r = run_scenarios(
        "check", o_.paths, [&](const std::vector<Scenario>& s) { return plan_check(s, ov); },
        o_.outputs, env, subject ? &*subject : nullptr, repeat, ov.sim, shard);
    if (r.exit) return *r.exit;
    Report& report = r.report;
    // A subject on tlab's clock also gets the property layer: random ABI call
    // sequences against the reference model, shrunk to a replayable transcript.
    // Sharded, it is one more case of the plan, run by the shard its key names.
    if (subject && property_applies(*subject) && !report.interrupted) {
      SubjectPropertyOptions po;
      po.seed = o_.property_seed;
      po.tests = o_.property_tests;
      std::optional<std::size_t> index;
      if (report.shard) {
        index = extend_sharded_plan(
            report, fmt::format("property:{}|seed={}|tests={}", subject->name, po.seed, po.tests));
      }
      if (!report.shard || index) {
        report.cases.push_back(run_property_case(*subject, po, kPropertyLimitS));
        report.cases.back().plan_index = index;
        if (report.cases.back().result.verdict == Verdict::kInterrupted) report.interrupted = true;
      }
    } else if (subject && !o_.outputs.json) {
      *env.err << "tlab: the property layer needs a subject on tlab's clock "
                  "(TLAB_PROMISE_VIRTUAL); "
               << subject->name << " runs only the scenarios\n";
    }
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
  CLI::App* sub_ = nullptr;
  CheckOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_check_command() { return std::make_unique<CheckCommand>(); }

}  // namespace tlab::tool
