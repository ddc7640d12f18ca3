// tlab/tool/commands/mutants.cc: `tlab mutants`: the kill matrix
// (layers/kill_matrix.h): which layer (scenario, model, property, tsan) catches
// each mutant, and how fast. The scenario layer is the built-in suite's catches
// run here through the stress runner; the others run as separate binaries
// (layers/layers.h). With --trials N the scenario and tsan layers run each
// (check, mutant) N times with the scenario's seed and the matrix gives each
// check's detection rate and median time (kill_matrix.h, Trials). The sim layer
// runs the same catches under deterministic simulation, --sim-trials searches of
// up to --sim-schedules seeds each (layers/sim_layer.h): a seed replays exactly,
// so trials differ by seed, and every trial must find the mutant. Exit 1 on a survivor, a mutant no
// layer catches, one only flaky checks catch, a sim check below 100%, or a mutant
// Relacy catches that sim does not (kill_matrix.h, disagreements).
// With --shard i/n (or a sharding variable) it runs one shard of the matrix's units
// (layers/layer_shard.h) and exits 0 unless a layer errs: `tlab merge` of all the
// shards applies the gate to the joined matrix.
#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/shard_option.h"
#include "layers/kill_matrix.h"
#include "layers/layers.h"
#include "layers/sim_layer.h"
#include "plan/shard_plan.h"
#include "plan/trials.h"

namespace tlab::tool {

namespace {

struct MutantsOptions {
  std::vector<std::string> layers;
  std::uint64_t iterations = 100000;
  std::size_t trials = 1;
  std::uint32_t search_rounds = kDefaultSearchRounds;
  std::uint32_t sim_trials = 20;
  std::uint32_t sim_schedules = 10;
  LayerSources sources;
  std::string shard;
  OutputOptions outputs;  // --report, --sarif, --html and --json (no --junit)
};

class MutantsCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub_ = &sub;
    sub.description(
        "the kill matrix: which layer (scenario, model, property, tsan) catches each "
        "mutant, and how fast");
    sub.add_option("--layers", o_.layers,
                   "layers to run (default: all; a layer named here must be available)")
        ->type_name("L,...")
        ->delimiter(',')
        ->check(CLI::IsMember({"scenario", "sim", "model", "property", "tsan"}));
    sub.add_option("--iterations", o_.iterations,
                   "random-scheduler iterations per model run (default 100000)")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
    sub.add_option("--trials", o_.trials,
                   "runs of each scenario and tsan check against its mutant, with the "
                   "scenario's seed; the matrix gives detections/trials and the median time "
                   "(default 1; models and property tests run once: they are deterministic)")
        ->type_name("N")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
    sub.add_option("--search-rounds", o_.search_rounds,
                   fmt::format("scenario layer: a check searches for its mutant in up to N "
                               "rounds over the scenario's strategies, each at a fresh seed "
                               "(default {}; 1: one run per strategy)",
                               kDefaultSearchRounds))
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    sub.add_option("--sim-trials", o_.sim_trials,
                   "trials of each sim check, each a search over --sim-schedules fresh seeds "
                   "(default 20)")
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    sub.add_option("--sim-schedules", o_.sim_schedules,
                   "seeded schedules a sim trial may explore before its check counts as "
                   "missed (default 10)")
        ->type_name("K")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    add_layer_binaries(sub, o_.sources);
    add_layer_sources(sub, o_.sources);
    add_shard_option(sub, o_.shard);
    sub.add_option("--report", o_.outputs.report_path,
                   "write the full JSON report (cases and kill_matrix) to F")
        ->type_name("F");
    add_ci_outputs(sub, o_.outputs);
    sub.add_flag("--json", o_.outputs.json, "print the kill matrix as JSON instead of the table");
    add_example(sub, "tlab mutants --layers scenario --json");
    add_example(sub, "tlab mutants --layers scenario --trials 5");
    add_example(sub, "tlab mutants --layers scenario,sim --shard 1/3 --report shard-1.json");
  }

  int run(const CliEnv& env) override {
    InputErrors errors;
    if (!check_outputs(o_.outputs, errors)) return bad_input(errors, env);
    std::optional<Shard> shard;
    if (auto stop = resolve_shard_option(*sub_, o_.shard, env, shard)) return *stop;
    std::optional<LayerShard> units;
    if (shard) units.emplace(*shard);
    const auto suite = load_builtin_suite(ScenarioLoader(), env);
    if (!suite) return kExitInternal;
    LayerPlan plan;
    plan.layers = o_.layers;
    plan.sources = o_.sources;
    plan.model.iterations = o_.iterations;
    plan.model.jobs = model_jobs(o_.sources.jobs);
    plan.trials = o_.trials;
    plan.progress = env.stderr_is_tty ? env.err : nullptr;
    plan.shard = units ? &*units : nullptr;

    KillMatrix matrix;
    Report report;
    report.command = "mutants";
    report.environment = Environment::detect();
    for (const Scenario& s : *suite) report.scenarios[s.name] = {s.source, s.document};
    if (layer_wanted(plan, Layer::kScenario)) {
      auto runner = runner_or_null(env);
      if (!runner) return kExitInternal;
      std::vector<CaseSpec> specs;
      for (CaseSpec& spec : plan_check(*suite, Overrides{})) {
        if (!spec.expect_fail) continue;
        if (units && !units->take(fmt::format("scenario|{}|trials={}", scenario_case_key(spec),
                                              o_.trials),
                                  fmt::format("scenario|{}:{}", spec.scenario->name,
                                              name_of(*spec.mutant)))) {
          continue;
        }
        specs.push_back(std::move(spec));
      }
      ExecuteOptions options;
      options.command = "mutants";
      options.show_progress = env.stderr_is_tty;
      options.search_rounds = o_.search_rounds;
      const auto t0 = std::chrono::steady_clock::now();
      LayerStatus& st = matrix.layer(Layer::kScenario);
      st.state = LayerStatus::State::kRan;
      st.source = "this tlab: the built-in suite's catches";
      st.trials = o_.trials;
      // Each trial is a whole `tlab check` pass over the mutant cases on real
      // threads (a pair is a detection search, plan.h: it stops at its first
      // catching run); every trial's cases go into the report.
      for (std::size_t trial = 0; trial < o_.trials && !report.interrupted; ++trial) {
        Report scenario_report = execute_plan(specs, *suite, *runner, options);
        st.checks = scenario_report.summary().mutant_pairs;
        add_scenario_cases(matrix, scenario_report.cases, *suite);
        report.cases.insert(report.cases.end(),
                            std::make_move_iterator(scenario_report.cases.begin()),
                            std::make_move_iterator(scenario_report.cases.end()));
        report.planned += scenario_report.planned;
        report.interrupted = scenario_report.interrupted;
      }
      st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (layer_wanted(plan, Layer::kSim) && !report.interrupted) {
      auto runner = runner_or_null(env);
      if (!runner) return kExitInternal;
      run_sim_layer(matrix, *suite, *runner, o_.sim_trials, o_.sim_schedules,
                    env.stderr_is_tty, report, plan.shard);
    }
    if (!report.interrupted) {
      run_other_layers(matrix, *suite, plan, /*clean_models=*/false, report);
    }
    report.kill_matrix = matrix.to_json();
    if (units) {
      units->record(report);
      *env.err << "tlab: a shard's exit code leaves out the gate (a mutant may be caught in "
                  "another shard); `tlab merge` of every shard's --report applies it\n";
    }
    int code = report.exit_code();
    try {
      if (!o_.outputs.report_path.empty()) {
        write_file_atomic(o_.outputs.report_path, report.to_json().dump(2) + "\n");
      }
      write_ci_outputs(report, o_.outputs, env);
    } catch (const std::exception& e) {
      *env.err << "tlab: internal error: " << e.what() << "\n";
      code = kExitInternal;
    }
    if (o_.outputs.json) {
      nlohmann::ordered_json j = *report.kill_matrix;
      nlohmann::ordered_json out;
      out["schema_version"] = kReportSchemaVersion;
      out["command"] = "mutants";
      out["environment"] = report.environment.to_json();
      for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it.value();
      *env.out << out.dump(2) << "\n";
    } else {
      *env.out << matrix.table();
    }
    return code;
  }

 private:
  CLI::App* sub_ = nullptr;
  MutantsOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_mutants_command() { return std::make_unique<MutantsCommand>(); }

}  // namespace tlab::tool
