// tlab/tool/cli.cc: see cli.h.
#include "cli.h"

#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "build_info.h"
#include "compare.h"
#include "console.h"
#include "junit.h"
#include "plan.h"
#include "report.h"
#include "scenario.h"
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
  return finish(execute_plan(specs, scenarios, *runner, options), /*table=*/true);
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
  add_outputs(check_, true);

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

  for (CLI::App* sub : {run_, check_, list_, validate_, replay_, app_.get_subcommand("compare")}) {
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
              "replay, compare)";
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
