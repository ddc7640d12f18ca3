// tlab/tool/cli/cli.cc: see cli.h.
#include "cli/cli.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "base/build_info.h"
#include "commands/compare.h"
#include "report/console.h"
#include "base/interrupt.h"
#include "report/junit.h"
#include "layers/kill_matrix.h"
#include "layers/model_runs.h"
#include "layers/layers.h"
#include "plan/plan.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "strategy_catalogue.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

namespace {

// Seeds travel through JSON reports; 2^53 - 1 keeps them exact in every JSON reader.
constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;
constexpr double kMaxBudgetS = 600;
constexpr std::uint64_t kMaxOperations = 100000000;

std::string version_string() {
  return fmt::format("tlab {} (git {}, {} build)", kTlabVersion, kGitRevision, kBuildType);
}

std::vector<std::string> strategy_names(bool with_all) {
  std::vector<std::string> names;
  if (with_all) names.emplace_back("all");
  for (const auto& row : kStrategyInfo) names.emplace_back(row.name);
  return names;
}

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (const auto& row : kMutantInfo) names.emplace_back(row.name);
  return names;
}

// Options of the scenario-running commands, filled by CLI11.
struct RunOptions {
  std::vector<std::string> paths;
  std::string strategy;
  std::string mutant;
  std::uint64_t seed = 0;
  std::string budget;
  std::uint64_t operations = 0;
  std::string report_path;
  std::string junit_path;
  bool json = false;
  // replay
  std::string replay_report;
  std::string case_id;
  // model / mutants / check --models
  std::vector<std::string> model_names;
  std::vector<std::string> model_tests;
  std::string scheduler = "random";
  std::uint64_t iterations = 100000;
  unsigned context_bound = 1;
  bool clean_only = false;
  int jobs = 0;  // 0: the CPUs this process may use
  std::string timeout = "300s";
  std::string models_dir;
  std::string history_dir;
  std::string property_bin;
  std::string tsan_tlab;
  std::vector<std::string> layers;
  bool with_models = false;  // check --models
};

class Cli {
 public:
  explicit Cli(const CliEnv& env) : env_(env), out_(*env.out), err_(*env.err) {}

  int main(int argc, const char* const* argv);

 private:
  void add_common(CLI::App* sub);
  void add_outputs(CLI::App* sub, bool junit);
  int cmd_list();
  int cmd_validate();
  int cmd_run(const std::string& command);
  int cmd_replay();
  int cmd_model();
  int cmd_mutants();

  void add_layer_sources(CLI::App* sub);
  // --layers names `l`, or names nothing (all layers).
  bool layer_wanted(Layer l) const {
    return o_.layers.empty() ||
           std::find(o_.layers.begin(), o_.layers.end(), name_of(l)) != o_.layers.end();
  }
  ModelRunOptions model_options() const;
  // Runs the kill-matrix layers other than `scenario` into `matrix`, appends the
  // model cases to `report` and sets its kill_matrix. --layers empty means all,
  // none required.
  void run_other_layers(KillMatrix& matrix, const std::vector<Scenario>& suite, Report& report,
                        bool clean_models);
  // The scenario layer: in a TSan build, tsan_catches pairs count as layer tsan.
  static void add_scenario_cases(KillMatrix& matrix, const std::vector<CaseRecord>& cases,
                                 const std::vector<Scenario>& suite);
  int bad_input(const InputErrors& errors);
  bool check_outputs(InputErrors& errors);
  std::unique_ptr<Runner> runner_or_null();
  int finish(const Report& report, bool table);
  Overrides overrides(InputErrors& errors) const;

  const CliEnv& env_;
  std::ostream& out_;
  std::ostream& err_;
  CLI::App app_{"tlab: stress and verification tool for cancelable timers", "tlab"};
  CLI::App* run_ = nullptr;
  CLI::App* check_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* validate_ = nullptr;
  CLI::App* replay_ = nullptr;
  CLI::App* model_ = nullptr;
  CLI::App* mutants_ = nullptr;
  std::unique_ptr<CompareCommand> compare_;  // compare.h owns its options
  RunOptions o_;
  std::string list_what_;
  bool list_json_ = false;
  std::vector<std::string> validate_files_;
  ScenarioLoader loader_;
};

void Cli::add_common(CLI::App* sub) { sub->set_version_flag("--version", version_string()); }

void Cli::add_outputs(CLI::App* sub, bool junit) {
  sub->add_option("--report", o_.report_path, "write the JSON report to F (atomically)")
      ->type_name("F");
  if (junit) {
    sub->add_option("--junit", o_.junit_path, "write JUnit XML to F (atomically)")->type_name("F");
  }
  sub->add_flag("--json", o_.json, "print the JSON report on stdout instead of the table");
}

int Cli::bad_input(const InputErrors& errors) {
  for (const InputError& e : errors) err_ << e.str() << "\n";
  return kExitBadInput;
}

bool Cli::check_outputs(InputErrors& errors) {
  std::set<std::string> used;
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"--report", o_.report_path},
                                   {"--junit", o_.junit_path}}) {
    if (path.empty()) continue;
    check_output_path(path, flag, errors);
    if (!used.insert(path).second) {
      errors.push_back(
          {path, "/", fmt::format("{}: the same file is named by another flag", flag)});
    }
  }
  return errors.empty();
}

std::unique_ptr<Runner> Cli::runner_or_null() {
  std::unique_ptr<Runner> runner = env_.make_runner ? env_.make_runner() : nullptr;
  if (!runner) {
    err_ << "tlab: internal error: runner not built yet: this build of tlab has no stress "
            "runner, so nothing was run\n";
  }
  return runner;
}

Overrides Cli::overrides(InputErrors& errors) const {
  Overrides ov;
  if (!o_.strategy.empty()) ov.strategy = o_.strategy;
  if (!o_.mutant.empty()) ov.mutant = mutant_from_name(o_.mutant);
  if (run_->count("--seed") > 0) ov.seed = o_.seed;
  if (run_->count("--operations") > 0) ov.operations = o_.operations;
  if (!o_.budget.empty()) ov.budget_s = parse_duration_s(o_.budget);
  return ov;
}

int Cli::finish(const Report& report, bool table) {
  const std::string json = report.to_json().dump(2) + "\n";
  int code = report.exit_code();
  try {
    if (!o_.report_path.empty()) write_file_atomic(o_.report_path, json);
    if (!o_.junit_path.empty()) write_file_atomic(o_.junit_path, junit_xml(report));
  } catch (const std::exception& e) {
    err_ << "tlab: internal error: " << e.what() << "\n";
    code = kExitInternal;
  }
  if (o_.json) {
    out_ << json;
  } else if (table) {
    out_ << format_table(report, env_.stdout_is_tty && use_color(1));
  } else {
    out_ << compare_table(report);
  }
  if (report.interrupted) {
    err_ << "tlab: interrupted; the partial report"
         << (o_.report_path.empty() ? std::string() : " in " + o_.report_path)
         << " is marked \"interrupted\": true\n";
  }
  return code;
}

int Cli::cmd_list() {
  const bool all = list_what_.empty();
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  std::string text;
  auto section = [&](const std::string& title,
                     const std::vector<std::array<std::string, 3>>& rows) {
    std::size_t w0 = 0, w1 = 0;
    for (const auto& r : rows) {
      w0 = std::max(w0, r[0].size());
      w1 = std::max(w1, r[1].size());
    }
    if (all) text += title + ":\n";
    for (const auto& r : rows) {
      std::string line =
          fmt::format("{}{:<{}}  {:<{}}  {}", all ? "  " : "", r[0], w0, r[1], w1, r[2]);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      text += line + "\n";
    }
  };
  if (all || list_what_ == "strategies") {
    std::vector<std::array<std::string, 3>> rows;
    auto& arr = j["strategies"] = nlohmann::ordered_json::array();
    for (const auto& s : kStrategyInfo) {
      rows.push_back({std::string(s.name), "", std::string(s.summary)});
      arr.push_back({{"name", s.name}, {"exact", s.exact}, {"description", s.summary}});
    }
    section("strategies", rows);
  }
  if (all || list_what_ == "scenarios") {
    InputErrors errors;
    const std::vector<Scenario> suite = loader_.load_builtin(errors);
    if (!errors.empty()) {
      for (const InputError& e : errors) err_ << e.str() << "\n";
      err_ << "tlab: internal error: the built-in suite does not validate\n";
      return kExitInternal;
    }
    std::vector<std::array<std::string, 3>> rows;
    auto& arr = j["scenarios"] = nlohmann::ordered_json::array();
    for (const Scenario& s : suite) {
      std::vector<std::string> catches;
      for (Mutant m : s.catches) catches.emplace_back(name_of(m));
      rows.push_back({s.name, s.source, s.description});
      arr.push_back({{"name", s.name},
                     {"source", s.source},
                     {"description", s.description},
                     {"strategies", s.engine.strategies},
                     {"catches", catches}});
    }
    section("scenarios", rows);
  }
  if (all || list_what_ == "mutants") {
    std::vector<std::array<std::string, 3>> rows;
    auto& arr = j["mutants"] = nlohmann::ordered_json::array();
    for (const auto& m : kMutantInfo) {
      rows.push_back({std::string(m.name), std::string(m.component), std::string(m.failure_class)});
      arr.push_back(
          {{"name", m.name}, {"component", m.component}, {"failure_class", m.failure_class}});
    }
    section("mutants", rows);
  }
  if (all || list_what_ == "faults") {
    std::vector<std::array<std::string, 3>> rows;
    auto& arr = j["faults"] = nlohmann::ordered_json::array();
    for (const auto& f : kFaultPointInfo) {
      rows.push_back({std::string(f.name), "", std::string(f.description)});
      arr.push_back({{"name", f.name}, {"description", f.description}});
    }
    section("faults", rows);
  }
  if (list_json_) {
    out_ << j.dump(2) << "\n";
  } else {
    out_ << text;
  }
  return kExitOk;
}

int Cli::cmd_validate() {
  InputErrors errors;
  std::size_t ok = 0;
  for (const std::string& path : validate_files_) {
    InputErrors mine;
    const std::vector<Scenario> loaded = loader_.load_paths({path}, mine);
    for (const Scenario& s : loaded) out_ << s.source << ": ok (" << s.name << ")\n";
    ok += loaded.size();
    errors.insert(errors.end(), mine.begin(), mine.end());
  }
  if (!errors.empty()) return bad_input(errors);
  return ok > 0 ? kExitOk : kExitBadInput;
}

int Cli::cmd_run(const std::string& command) {
  InputErrors errors;
  const Overrides ov = command == "run" ? overrides(errors) : Overrides{};
  std::vector<Scenario> scenarios;
  if (o_.paths.empty()) {
    scenarios = loader_.load_builtin(errors);
    if (!errors.empty()) {
      for (const InputError& e : errors) err_ << e.str() << "\n";
      err_ << "tlab: internal error: the built-in suite does not validate\n";
      return kExitInternal;
    }
    if (scenarios.empty()) {
      err_ << "tlab: no scenarios: the built-in suite of this build is empty; name files or "
              "directories\n";
      return kExitBadInput;
    }
  } else {
    scenarios = loader_.load_paths(o_.paths, errors);
  }
  check_outputs(errors);
  if (!errors.empty()) return bad_input(errors);
  const std::vector<CaseSpec> specs =
      command == "run" ? plan_run(scenarios, ov) : plan_check(scenarios, ov);
  auto runner = runner_or_null();
  if (!runner) return kExitInternal;
  ExecuteOptions options;
  options.command = command;
  options.show_progress = env_.stderr_is_tty;
  options.on_case_done = [&](const Report& partial) {
    if (o_.report_path.empty()) return;
    try {
      write_file_atomic(o_.report_path, partial.to_json().dump(2) + "\n");
    } catch (const std::exception&) {
      // finish() writes again and reports the failure.
    }
  };
  Report report = execute_plan(specs, scenarios, *runner, options);
  if (command != "check" || !o_.with_models || report.interrupted) {
    return finish(report, /*table=*/true);
  }
  // check --models: the models' clean and mutant runs join the report, and the
  // gate also fails when a mutant is caught by no layer at all.
  KillMatrix matrix;
  LayerStatus& st = matrix.layer(Layer::kScenario);
  st.state = LayerStatus::State::kRan;
  st.source = "tlab check: the scenarios given";
  st.checks = report.summary().mutant_pairs;
  for (const CaseRecord& c : report.cases) st.seconds += c.result.duration_s;
  add_scenario_cases(matrix, report.cases, scenarios);
  run_other_layers(matrix, scenarios, report, /*clean_models=*/true);
  const int code = finish(report, /*table=*/true);
  if (!o_.json) out_ << "\n" << matrix.table();
  if (code == kExitInterrupted || code == kExitInternal) return code;
  return std::max(code, matrix.exit_code());
}

int Cli::cmd_replay() {
  InputErrors errors;
  std::optional<std::string> id;
  if (!o_.case_id.empty()) id = o_.case_id;
  auto target = load_replay_target(o_.replay_report, id, errors);
  if (!target) return bad_input(errors);
  auto scenario = loader_.load_document(
      target->scenario_document, o_.replay_report + " (scenario " + target->scenario_source + ")",
      errors);
  if (!is_strategy(target->strategy)) {
    errors.push_back(
        {o_.replay_report, "/cases",
         fmt::format("case {}: unknown strategy '{}'", target->case_id, target->strategy)});
  }
  std::optional<Mutant> mutant;
  if (target->mutant) {
    mutant = mutant_from_name(*target->mutant);
    if (!mutant) {
      errors.push_back(
          {o_.replay_report, "/cases",
           fmt::format("case {}: unknown mutant '{}'", target->case_id, *target->mutant)});
    }
  }
  check_outputs(errors);
  if (!errors.empty() || !scenario) return bad_input(errors);
  Overrides ov;
  ov.seed = target->seed;
  ov.operations = target->operations;
  ov.budget_s = target->budget_s;
  std::vector<Scenario> scenarios{std::move(*scenario)};
  const std::vector<CaseSpec> specs{
      plan_case(scenarios.front(), target->strategy, mutant, ov, /*expect_fail=*/false)};
  auto runner = runner_or_null();
  if (!runner) return kExitInternal;
  ExecuteOptions options;
  options.command = "replay";
  options.show_progress = env_.stderr_is_tty;
  Report report = execute_plan(specs, scenarios, *runner, options);
  if (!report.cases.empty()) {
    const std::string now(name_of(report.cases.front().result.verdict));
    err_ << fmt::format("replay of {}: recorded verdict {}, replayed verdict {} ({})\n",
                        target->case_id, target->recorded_verdict, now,
                        now == target->recorded_verdict ? "reproduced" : "NOT reproduced");
  }
  return finish(report, /*table=*/true);
}

bool tsan_build() { return Environment::detect().sanitizer.find("thread") != std::string::npos; }

int cpus_available() {
  const int n = Environment::detect().cpus_available;
  return n > 0 ? n : 1;
}

void Cli::add_layer_sources(CLI::App* sub) {
  sub->add_option("--models-dir", o_.models_dir,
                  "directory of the model_* binaries (default: this build's, see "
                  "`tlab model --help`)")
      ->type_name("DIR");
  sub->add_option("--jobs", o_.jobs, "model runs at once (default: the CPUs available)")
      ->type_name("N")
      ->check(CLI::Range(1, 256));
}

ModelRunOptions Cli::model_options() const {
  ModelRunOptions mo;
  mo.scheduler = o_.scheduler == "bound"  ? ModelScheduler::kBound
                 : o_.scheduler == "full" ? ModelScheduler::kFull
                                          : ModelScheduler::kRandom;
  mo.iterations = o_.iterations;
  mo.context_bound = o_.context_bound;
  mo.timeout_s = parse_duration_s(o_.timeout).value_or(300);
  mo.jobs = o_.jobs > 0 ? o_.jobs : cpus_available();
  mo.history_dir = o_.history_dir;
  return mo;
}

void Cli::add_scenario_cases(KillMatrix& matrix, const std::vector<CaseRecord>& cases,
                             const std::vector<Scenario>& suite) {
  std::set<std::string> tsan_pairs;
  for (const Scenario& s : suite) {
    for (Mutant m : s.tsan_catches) tsan_pairs.insert(s.name + ":" + std::string(name_of(m)));
  }
  matrix.add_cases(cases, [&](const CaseRecord& c) {
    if (c.model) return Layer::kModel;
    return tsan_pairs.count(c.scenario + ":" + c.mutant.value_or("")) ? Layer::kTsan
                                                                      : Layer::kScenario;
  });
}

void Cli::run_other_layers(KillMatrix& matrix, const std::vector<Scenario>& suite, Report& report,
                           bool clean_models) {
  std::vector<CaseRecord> cases;
  auto request = [&](Layer l, const std::string& path) {
    LayerRequest r;
    r.required = !o_.layers.empty();
    r.explicit_path = path;
    return r;
  };
  if (layer_wanted(Layer::kModel)) {
    if (env_.stderr_is_tty) err_ << "tlab: running the Relacy models...\n";
    run_model_layer(matrix, request(Layer::kModel, o_.models_dir), model_options(), clean_models,
                    cases);
  }
  if (layer_wanted(Layer::kProperty)) {
    run_property_layer(matrix, request(Layer::kProperty, o_.property_bin));
  }
  if (layer_wanted(Layer::kTsan)) {
    if (tsan_build()) {
      // This tlab is the TSan build: the scenario layer ran tsan_catches in-process.
      LayerStatus& st = matrix.layer(Layer::kTsan);
      st = matrix.layer(Layer::kScenario);
      st.source = "this tlab (a TSan build): the scenarios' tsan_catches";
    } else {
      if (env_.stderr_is_tty) err_ << "tlab: running the TSan build of tlab...\n";
      run_tsan_layer(matrix, request(Layer::kTsan, o_.tsan_tlab), suite,
                     parse_duration_s(o_.timeout).value_or(300));
    }
  }
  report.planned += cases.size();
  report.cases.insert(report.cases.end(), std::make_move_iterator(cases.begin()),
                      std::make_move_iterator(cases.end()));
  report.interrupted = report.interrupted || interrupted();
  report.kill_matrix = matrix.to_json();
}

int Cli::cmd_model() {
  InputErrors errors;
  if (o_.scheduler != "random" && model_->count("--iterations") > 0) {
    errors.push_back({"--iterations", "/",
                      fmt::format("applies to --scheduler random only (bound and full search "
                                  "until their space is exhausted); got --scheduler {}",
                                  o_.scheduler)});
  }
  if (o_.scheduler != "bound" && model_->count("--context-bound") > 0) {
    errors.push_back(
        {"--context-bound", "/",
         fmt::format("applies to --scheduler bound only; got --scheduler {}", o_.scheduler)});
  }
  std::vector<std::string> looked_in;
  const auto dir = find_models_dir(o_.models_dir, errors, looked_in);
  check_outputs(errors);
  if (!errors.empty()) return bad_input(errors);
  if (!dir) {
    err_ << fmt::format(
        "tlab: internal error: no model binaries found (looked in {}); build them with "
        "`cmake --build build/default` (TLAB_BUILD_MODELS=ON), set TLAB_MODELS_DIR or pass "
        "--models-dir\n",
        fmt::join(looked_in, ", "));
    return kExitInternal;
  }
  std::string error;
  const auto catalogue = load_model_catalogue(*dir, error);
  if (!catalogue) {
    err_ << "tlab: internal error: " << error << "\n";
    return kExitInternal;
  }
  ModelSelection sel;
  sel.models = o_.model_names;
  sel.tests = o_.model_tests;
  if (!o_.mutant.empty()) sel.mutant = mutant_from_name(o_.mutant);
  sel.mutants = !o_.clean_only;
  const std::vector<ModelRunSpec> specs = plan_models(*catalogue, sel, errors);
  if (!errors.empty()) return bad_input(errors);

  ModelRunOptions mo = model_options();
  bool made_history_dir = false;
  namespace fs = std::filesystem;
  if (mo.history_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "tlab-model-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      err_ << "tlab: internal error: cannot create a history directory under "
           << fs::temp_directory_path().string() << "\n";
      return kExitInternal;
    }
    mo.history_dir = tmpl;
    made_history_dir = true;
  } else {
    std::error_code ec;
    fs::create_directories(mo.history_dir, ec);
    if (ec || !fs::is_directory(mo.history_dir)) {
      return bad_input({{"--history-dir", "/",
                         fmt::format("{}: cannot create the directory ({})", mo.history_dir,
                                     ec ? ec.message() : "not a directory")}});
    }
  }

  Report report;
  report.command = "model";
  report.environment = Environment::detect();
  report.planned = specs.size();
  Progress progress(env_.stderr_is_tty);
  std::size_t done = 0;
  report.cases = run_models(
      specs, mo, [&](const CaseRecord& c) { progress.update(++done, specs.size(), c.id); });
  progress.clear();
  report.interrupted = std::any_of(report.cases.begin(), report.cases.end(), [](const auto& c) {
    return c.result.verdict == Verdict::kInterrupted;
  });
  if (report.interrupted) {
    std::erase_if(report.cases,
                  [](const CaseRecord& c) { return c.result.verdict == Verdict::kInterrupted; });
  }
  std::error_code ec;
  const bool histories = fs::exists(mo.history_dir, ec) && !fs::is_empty(mo.history_dir, ec);
  if (made_history_dir && !histories) fs::remove(mo.history_dir, ec);
  const int code = finish(report, /*table=*/true);
  if (histories) {
    err_ << "tlab: Relacy execution histories of the failing runs are in " << mo.history_dir
         << "\n";
  }
  return code;
}

int Cli::cmd_mutants() {
  InputErrors errors;
  check_outputs(errors);
  if (!errors.empty()) return bad_input(errors);
  const std::vector<Scenario> suite = loader_.load_builtin(errors);
  if (!errors.empty()) {
    for (const InputError& e : errors) err_ << e.str() << "\n";
    err_ << "tlab: internal error: the built-in suite does not validate\n";
    return kExitInternal;
  }
  KillMatrix matrix;
  Report report;
  report.command = "mutants";
  report.environment = Environment::detect();
  for (const Scenario& s : suite) report.scenarios[s.name] = {s.source, s.document};
  if (layer_wanted(Layer::kScenario)) {
    auto runner = runner_or_null();
    if (!runner) return kExitInternal;
    std::vector<CaseSpec> specs;
    for (CaseSpec& spec : plan_check(suite, Overrides{})) {
      if (spec.expect_fail) specs.push_back(std::move(spec));
    }
    ExecuteOptions options;
    options.command = "mutants";
    options.show_progress = env_.stderr_is_tty;
    const auto t0 = std::chrono::steady_clock::now();
    Report scenario_report = execute_plan(specs, suite, *runner, options);
    LayerStatus& st = matrix.layer(Layer::kScenario);
    st.state = LayerStatus::State::kRan;
    st.source = "this tlab: the built-in suite's catches";
    st.checks = scenario_report.summary().mutant_pairs;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    add_scenario_cases(matrix, scenario_report.cases, suite);
    report.cases = std::move(scenario_report.cases);
    report.planned = scenario_report.planned;
    report.interrupted = scenario_report.interrupted;
  }
  if (!report.interrupted) run_other_layers(matrix, suite, report, /*clean_models=*/false);
  report.kill_matrix = matrix.to_json();
  int code = report.interrupted ? kExitInterrupted : matrix.exit_code();
  try {
    if (!o_.report_path.empty()) {
      write_file_atomic(o_.report_path, report.to_json().dump(2) + "\n");
    }
  } catch (const std::exception& e) {
    err_ << "tlab: internal error: " << e.what() << "\n";
    code = kExitInternal;
  }
  if (o_.json) {
    nlohmann::ordered_json j = *report.kill_matrix;
    nlohmann::ordered_json out;
    out["schema_version"] = kReportSchemaVersion;
    out["command"] = "mutants";
    out["environment"] = report.environment.to_json();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it.value();
    out_ << out.dump(2) << "\n";
  } else {
    out_ << matrix.table();
  }
  return code;
}

int Cli::main(int argc, const char* const* argv) {
  app_.set_version_flag("--version", version_string());
  app_.require_subcommand(1);
  app_.footer(
      "Exit codes: 0 ok, 1 violation, 2 bad input or usage, 3 internal error or watchdog, "
      "130 interrupted.");

  const auto strategy_check = CLI::IsMember(strategy_names(true));
  // No description: the help would list all mutants; `tlab list mutants` does.
  const auto mutant_check = CLI::IsMember(mutant_names()).description("");
  const auto budget_check = CLI::Validator(
      [](std::string& s) -> std::string {
        auto v = parse_duration_s(s);
        if (!v) return fmt::format("'{}' is not a duration (examples: 5, 5s, 500ms, 2m)", s);
        if (*v <= 0 || *v > kMaxBudgetS) {
          return fmt::format("'{}' is outside (0, {}s]", s, kMaxBudgetS);
        }
        return {};
      },
      "DURATION", "duration");

  run_ = app_.add_subcommand("run", "run scenarios (default: the built-in suite)");
  run_->add_option("PATHS", o_.paths, "scenario files or directories")->type_name("PATH");
  run_->add_option("--strategy", o_.strategy, "one strategy, or all (default: each scenario's)")
      ->type_name("S")
      ->check(strategy_check);
  run_->add_option("--mutant", o_.mutant, "turn on one mutant (see `tlab list mutants`)")
      ->type_name("M")
      ->check(mutant_check);
  run_->add_option("--seed", o_.seed, "override every scenario's seed")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{0}, kMaxSeed));
  run_->add_option("--budget", o_.budget, "watchdog budget per case, e.g. 5s, 500ms (max 600s)")
      ->type_name("D")
      ->check(budget_check);
  run_->add_option("--operations", o_.operations, "override every scenario's operation count")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, kMaxOperations));
  add_outputs(run_, true);

  check_ = app_.add_subcommand(
      "check", "CI gate: the suite on every strategy must pass; each listed mutant must fail");
  check_->add_option("PATHS", o_.paths, "scenario files or directories")->type_name("PATH");
  check_->add_flag("--models", o_.with_models,
                   "also run the Relacy models (clean and mutant runs) and the property and TSan "
                   "layers that are built; fail if any mutant is caught by no layer");
  add_layer_sources(check_);
  check_->add_option("--property-bin", o_.property_bin, "the rapidcheck test binary")
      ->type_name("F");
  check_->add_option("--tsan-tlab", o_.tsan_tlab, "a ThreadSanitizer build of tlab")
      ->type_name("F");
  add_outputs(check_, true);

  model_ = app_.add_subcommand(
      "model", "run the Relacy models over the shipped core code (clean runs and mutant runs)");
  model_->add_option("NAME", o_.model_names, "models to run (default: all; see --list)")
      ->type_name("NAME");
  model_->add_option("--test", o_.model_tests, "only these tests of the models")->type_name("T");
  model_
      ->add_option("--scheduler", o_.scheduler,
                   "random (default), bound (context-bound search) or full (exhaustive)")
      ->type_name("S")
      ->check(CLI::IsMember({"random", "bound", "full"}));
  model_
      ->add_option("--iterations", o_.iterations,
                   "iterations of the random scheduler (default 100000)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
  model_->add_option("--context-bound", o_.context_bound, "bound of --scheduler bound (default 1)")
      ->type_name("N")
      ->check(CLI::Range(0u, 64u));
  auto* model_mutant =
      model_->add_option("--mutant", o_.mutant, "only the runs that must catch this mutant")
          ->type_name("M")
          ->check(mutant_check);
  model_->add_flag("--clean", o_.clean_only, "only the clean runs (no mutants)")
      ->excludes(model_mutant);
  model_->add_option("--timeout", o_.timeout, "per run; a search still going is killed (300s)")
      ->type_name("D")
      ->check(budget_check);
  model_
      ->add_option("--history-dir", o_.history_dir,
                   "where failing runs' execution histories go (default: a new temporary "
                   "directory, named on stderr)")
      ->type_name("DIR");
  add_layer_sources(model_);
  add_outputs(model_, true);
  model_->footer(
      "Model binaries are looked for in: --models-dir, $TLAB_MODELS_DIR, this build's "
      "models/, <tlab's directory>/../models, <source>/build/default/models.");

  mutants_ = app_.add_subcommand(
      "mutants",
      "the kill matrix: which layer (scenario, model, property, tsan) catches each "
      "mutant, and how fast");
  mutants_
      ->add_option("--layers", o_.layers,
                   "layers to run (default: all; a layer named here must be available)")
      ->type_name("L,...")
      ->delimiter(',')
      ->check(CLI::IsMember({"scenario", "model", "property", "tsan"}));
  mutants_
      ->add_option("--iterations", o_.iterations,
                   "random-scheduler iterations per model run (default 100000)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
  mutants_->add_option("--property-bin", o_.property_bin, "the rapidcheck test binary")
      ->type_name("F");
  mutants_->add_option("--tsan-tlab", o_.tsan_tlab, "a ThreadSanitizer build of tlab")
      ->type_name("F");
  add_layer_sources(mutants_);
  mutants_
      ->add_option("--report", o_.report_path,
                   "write the full JSON report (cases and kill_matrix) to F")
      ->type_name("F");
  mutants_->add_flag("--json", o_.json, "print the kill matrix as JSON instead of the table");

  list_ = app_.add_subcommand("list", "list strategies, scenarios, mutants or fault points");
  list_->add_option("WHAT", list_what_, "strategies|scenarios|mutants|faults (default: all)")
      ->check(CLI::IsMember({"strategies", "scenarios", "mutants", "faults"}));
  list_->add_flag("--json", list_json_, "print JSON");

  validate_ = app_.add_subcommand("validate", "check scenario files against the schema only");
  validate_->add_option("FILES", validate_files_, "scenario files or directories")
      ->type_name("FILE")
      ->required();

  replay_ = app_.add_subcommand("replay", "re-run one case of a report from its recorded seed");
  replay_->add_option("REPORT", o_.replay_report, "a JSON report written by --report")
      ->type_name("FILE")
      ->required();
  replay_->add_option("--case", o_.case_id, "the case id (default: the only failing case)")
      ->type_name("ID");
  add_outputs(replay_, false);

  compare_ = add_compare_command(app_);

  for (CLI::App* sub : {run_, check_, list_, validate_, replay_, model_, mutants_,
                        app_.get_subcommand("compare")}) {
    add_common(sub);
  }

  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      app_.exit(e, out_, err_);
      return kExitOk;
    }
    if (app_.get_subcommands().empty() && argc > 1) {
      // CLI11 would only say "A subcommand is required"; name what was typed.
      err_ << "tlab: error: '" << argv[1]
           << "' is not a tlab command or option (commands: run, check, list, validate, "
              "replay, compare, model, mutants)";
    } else {
      err_ << "tlab: error: " << e.what();
    }
    err_ << "\nRun 'tlab --help' or 'tlab <command> --help'.\n";
    return kExitBadInput;
  }

  if (*list_) return cmd_list();
  if (*validate_) return cmd_validate();
  if (*run_) return cmd_run("run");
  if (*check_) return cmd_run("check");
  if (*replay_) return cmd_replay();
  if (*model_) return cmd_model();
  if (*mutants_) return cmd_mutants();
  if (compare_->selected()) return compare_->run(env_);
  return kExitInternal;
}

}  // namespace

int run_cli(int argc, const char* const* argv, const CliEnv& env) {
  try {
    Cli cli(env);
    return cli.main(argc, argv);
  } catch (const std::exception& e) {
    *env.err << "tlab: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace tlab::tool
