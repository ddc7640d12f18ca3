// tlab/tool/cli/common.cc: see common.h.
#include "cli/common.h"

#include "cli/shard_option.h"
#include "cli/subject_option.h"
#include "plan/shard_plan.h"
#include "subjects/subjects.h"

#include <algorithm>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "base/interrupt.h"
#include "oracles/oracles.h"
#include "plan/trials.h"
#include "report/console.h"
#include "report/findings.h"
#include "report/github.h"
#include "report/html_report.h"
#include "report/junit.h"
#include "report/sarif.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

CLI::Validator duration_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        auto v = parse_duration_s(s);
        if (!v) return fmt::format("'{}' is not a duration (examples: 5, 5s, 500ms, 2m)", s);
        if (*v <= 0 || *v > kMaxDurationS) {
          return fmt::format("'{}' is outside (0, {}s]", s, kMaxDurationS);
        }
        return {};
      },
      "DURATION", "duration");
}

CLI::Validator mutant_check() {
  std::vector<std::string> names;
  for (const auto& row : kMutantInfo) names.emplace_back(row.name);
  return CLI::IsMember(names).description("");
}

void add_example(CLI::App& sub, const std::string& example) {
  const std::string footer = sub.get_footer();
  sub.footer((footer.empty() ? "" : footer + "\n\n") + "Example: " + example);
}

void add_sim_options(CLI::App& sub, SimOptions& o) {
  auto* sim = sub.add_option("--sim", o.strategy,
                             "run under deterministic simulation: every actor and the timer "
                             "thread are tasks of one scheduler seeded by the case's seed, on "
                             "virtual time; `random` walk or `pct` (priority change points)")
                  ->type_name("random|pct")
                  ->check(CLI::IsMember({"random", "pct"}));
  sub.add_option("--pct-depth", o.pct_depth, "with --sim pct: depth d (d - 1 change points)")
      ->type_name("D")
      ->check(CLI::Range(1, kMaxPctDepth))
      ->needs(sim);
}

std::optional<SimSpec> sim_spec_of(const CLI::App& sub, const SimOptions& o,
                                   InputErrors& errors) {
  if (o.strategy.empty()) return std::nullopt;
  SimSpec s;
  s.strategy = *sim_strategy_from_name(o.strategy);  // CLI11 checked the name
  s.pct_depth = o.pct_depth;
  if (sub.count("--pct-depth") > 0 && s.strategy != SimStrategy::kPct) {
    errors.push_back({"--pct-depth", "", "only with --sim pct (a random walk has no depth)"});
  }
  return s;
}

namespace {

// sim_scenarios: the scenarios whose engine runs under simulation; the others are
// bad input when `named`, else skipped with a line on err.
std::vector<Scenario> sim_scenarios(std::vector<Scenario> scenarios, bool named,
                                    InputErrors& errors, const CliEnv& env) {
  std::vector<Scenario> out;
  std::vector<std::string> skipped;
  for (Scenario& s : scenarios) {
    const std::optional<std::string> reason = sim_refusal(s);
    if (!reason) {
      out.push_back(std::move(s));
    } else if (named) {
      const char* pointer = s.engine.subject.empty() ? "/actors" : "/engine/subject";
      errors.push_back({s.source, pointer, "--sim cannot run this scenario: " + *reason});
    } else {
      skipped.push_back(fmt::format("{} ({})", s.name, *reason));
    }
  }
  for (const std::string& line : skipped) {
    *env.err << "tlab: --sim: skipping " << line << "\n";
  }
  return out;
}

}  // namespace

void add_outputs(CLI::App& sub, OutputOptions& o, bool junit) {
  sub.add_option("--report", o.report_path, "write the JSON report to F (atomically)")
      ->type_name("F");
  if (junit) {
    sub.add_option("--junit", o.junit_path, "write JUnit XML to F (atomically)")->type_name("F");
  }
  add_ci_outputs(sub, o);
  sub.add_flag("--json", o.json, "print the JSON report on stdout instead of the table");
  std::vector<std::string> names{"any"};
  for (const OracleInfo& info : kOracleInfo) names.emplace_back(info.name);
  sub.add_option("--fail-on", o.fail_on,
                 "fail a passed case on these findings even where its subject does not promise "
                 "them (a gate that wants them): oracle names, comma-separated, or any")
      ->delimiter(',')
      ->type_name("FINDING[,...]|any")
      ->check(CLI::IsMember(names));
}

void add_ci_outputs(CLI::App& sub, OutputOptions& o) {
  sub.add_option("--sarif", o.sarif_path,
                 "write the failing cases as SARIF 2.1.0 to F (atomically; README: Reports for CI)")
      ->type_name("F");
  sub.add_option("--html", o.html_path,
                 "write a self-contained HTML report to F (atomically; README: Reports for CI)")
      ->type_name("F");
}

void write_ci_outputs(const Report& report, const OutputOptions& o, const CliEnv& env) {
  const std::vector<Finding> found = findings(report, o.report_path);
  const std::vector<Finding> notes = unpromised_findings(report, o.report_path);
  if (!o.sarif_path.empty()) {
    write_file_atomic(o.sarif_path, sarif_json(report, found, notes).dump(2) + "\n");
  }
  if (!o.html_path.empty()) write_file_atomic(o.html_path, html_report(report, found, notes));
  emit_github(report, found, notes, *env.err);
}

bool check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                   InputErrors& errors) {
  std::set<std::string> used;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    check_output_path(path, flag, errors);
    if (!used.insert(path).second) {
      errors.push_back(
          {path, "/", fmt::format("{}: the same file is named by another flag", flag)});
    }
  }
  return errors.empty();
}

bool check_outputs(const OutputOptions& o, InputErrors& errors) {
  return check_outputs({{"--report", o.report_path},
                        {"--junit", o.junit_path},
                        {"--sarif", o.sarif_path},
                        {"--html", o.html_path}},
                       errors);
}

void add_layer_sources(CLI::App& sub, LayerSources& s) {
  sub.add_option("--models-dir", s.models_dir,
                 "directory of the model_* binaries (default: this build's, see "
                 "`tlab model --help`)")
      ->type_name("DIR");
  sub.add_option("--jobs", s.jobs, "model runs at once (default: the CPUs available)")
      ->type_name("N")
      ->check(CLI::Range(1, 256));
}

void add_layer_binaries(CLI::App& sub, LayerSources& s) {
  sub.add_option("--property-bin", s.property_bin, "the rapidcheck test binary")->type_name("F");
  sub.add_option("--tsan-tlab", s.tsan_tlab, "a ThreadSanitizer build of tlab")->type_name("F");
}

int bad_input(const InputErrors& errors, const CliEnv& env) {
  for (const InputError& e : cap_errors_per_file(errors)) *env.err << e.str() << "\n";
  return kExitBadInput;
}

std::unique_ptr<Runner> runner_or_null(const CliEnv& env) {
  std::unique_ptr<Runner> runner = env.make_runner ? env.make_runner() : nullptr;
  if (!runner) {
    *env.err << "tlab: internal error: runner not built yet: this build of tlab has no stress "
                "runner, so nothing was run\n";
  }
  return runner;
}

std::optional<std::vector<Scenario>> load_builtin_suite(const ScenarioLoader& loader,
                                                        const CliEnv& env) {
  InputErrors errors;
  std::vector<Scenario> suite = loader.load_builtin(errors);
  if (errors.empty()) return suite;
  bad_input(errors, env);
  *env.err << "tlab: internal error: the built-in suite does not validate\n";
  return std::nullopt;
}

Report fail_on_findings(Report report, const std::vector<std::string>& names) {
  if (names.empty()) return report;
  const bool any = std::find(names.begin(), names.end(), "any") != names.end();
  for (CaseRecord& c : report.cases) {
    if (c.result.verdict != Verdict::kPass || c.expect_fail) continue;
    std::vector<std::string> hit;
    for (const auto& [name, v] : c.result.violations) {
      if (v.count == 0 || judged(name, c.result.promises)) continue;
      if (any || std::find(names.begin(), names.end(), name) != names.end()) {
        hit.push_back(fmt::format("{}={}", name, v.count));
      }
    }
    if (hit.empty()) continue;
    c.result.verdict = Verdict::kFail;
    c.result.message =
        fmt::format("--fail-on: {} (not promised by the subject; failed as asked){}",
                    fmt::join(hit, " "), c.result.message.empty() ? "" : "; " + c.result.message);
  }
  return report;
}

int finish(const Report& unjudged, const OutputOptions& o, const CliEnv& env) {
  const Report report = fail_on_findings(unjudged, o.fail_on);
  const std::string json = report.to_json().dump(2) + "\n";
  int code = report.exit_code();
  try {
    if (!o.report_path.empty()) write_file_atomic(o.report_path, json);
    if (!o.junit_path.empty()) write_file_atomic(o.junit_path, junit_xml(report));
    write_ci_outputs(report, o, env);
  } catch (const std::exception& e) {
    // Not the input's fault and not a violation: 3, with the file and errno's text
    // ("cannot write out.json (...): File too large" under RLIMIT_FSIZE, main.cc).
    *env.err << "tlab: " << e.what() << "\n";
    code = kExitInternal;
  }
  if (o.json) {
    *env.out << json;
  } else {
    *env.out << format_table(report, env.stdout_is_tty && use_color(1));
  }
  if (report.interrupted) {
    *env.err << "tlab: interrupted; the partial report"
             << (o.report_path.empty() ? std::string() : " in " + o.report_path)
             << " is marked \"interrupted\": true\n";
  }
  return code;
}

std::vector<Scenario> load_runnable(const ScenarioLoader& loader,
                                    const std::vector<std::string>& paths, InputErrors& errors) {
  std::vector<Scenario> out;
  for (Scenario& s : loader.load_paths(paths, errors)) {
    if (check_runnable(s, s.source, errors)) out.push_back(std::move(s));
  }
  return out;
}

ScenarioRun run_scenarios(
    const std::string& command, const std::vector<std::string>& paths,
    const std::function<std::vector<CaseSpec>(const std::vector<Scenario>&)>& plan,
    const OutputOptions& o, const CliEnv& env, const SubjectFacts* subject,
    const Repetition& repeat, const std::optional<SimSpec>& sim,
    const std::optional<Shard>& shard) {
  ScenarioRun r;
  const ScenarioLoader loader;
  InputErrors errors;
  if (paths.empty()) {
    auto suite = load_builtin_suite(loader, env);
    if (!suite) {
      r.exit = kExitInternal;
      return r;
    }
    if (suite->empty()) {
      *env.err << "tlab: no scenarios: the built-in suite of this build is empty; name files or "
                  "directories\n";
      r.exit = kExitBadInput;
      return r;
    }
    r.scenarios = std::move(*suite);
    if (subject != nullptr) {
      r.scenarios = scenarios_for_subject(std::move(r.scenarios), *subject,
                                          o.verbose ? Refusals::kList : Refusals::kCount, errors,
                                          env);
    }
  } else {
    // A subject plays what it accepts; the engines' own check does not apply.
    r.scenarios = subject != nullptr ? scenarios_for_subject(loader.load_paths(paths, errors),
                                                             *subject, Refusals::kErrors, errors,
                                                             env)
                                     : load_runnable(loader, paths, errors);
    if (interrupted()) {
      *env.err << "tlab: interrupted while loading scenarios; nothing was run\n";
      r.exit = kExitInterrupted;
      return r;
    }
  }
  if (sim) r.scenarios = sim_scenarios(std::move(r.scenarios), !paths.empty(), errors, env);
  if (sim && r.scenarios.empty() && errors.empty()) {
    *env.err << "tlab: --sim: no scenario's engine runs under simulation\n";
    r.exit = kExitBadInput;
    return r;
  }
  if (subject != nullptr && r.scenarios.empty() && errors.empty()) {
    *env.err << fmt::format("tlab: no scenario applies to subject {}\n", subject->name);
    r.exit = kExitBadInput;
    return r;
  }
  if (!check_outputs(o, errors)) {
    r.exit = bad_input(errors, env);
    return r;
  }
  std::vector<CaseSpec> specs = plan(r.scenarios);
  std::optional<ShardedPlan> sharded;
  if (shard) sharded = shard_scenario_plan(specs, *shard);
  auto runner = runner_or_null(env);
  if (!runner) {
    r.exit = kExitInternal;
    return r;
  }
  ExecuteOptions options;
  options.command = command;
  options.show_progress = env.stderr_is_tty;
  options.log = env.err;
  options.on_case_done = [&](const Report& partial) {
    if (o.report_path.empty()) return;
    try {
      write_file_atomic(o.report_path, partial.to_json(/*complete=*/false).dump(2) + "\n");
    } catch (const std::exception&) {
      // finish() writes again and reports the failure.
    }
  };
  options.trials = repeat.trials;
  options.search_rounds = repeat.search_rounds;
  if (!repeat.rounds) {
    r.report = execute_plan(specs, r.scenarios, *runner, options);
    if (sharded) record_shard(r.report, *sharded);
    return r;
  }
  const std::uint32_t rounds = *repeat.rounds;
  for (std::uint32_t round = 1; round <= rounds; ++round) {
    std::vector<CaseSpec> round_specs = specs;
    if (repeat.vary_seed) {
      for (CaseSpec& spec : round_specs) spec.seed = seed_for_round(spec.seed, round);
    }
    options.until_fail = UntilFail{round, rounds, repeat.vary_seed};
    r.report = execute_plan(round_specs, r.scenarios, *runner, options);
    if (sharded) record_shard(r.report, *sharded);
    if (r.report.interrupted || r.report.exit_code() != kExitOk || round == rounds) break;
    *env.err << fmt::format("tlab: round {}/{}: no failure\n", round, rounds);
  }
  return r;
}

}  // namespace tlab::tool
