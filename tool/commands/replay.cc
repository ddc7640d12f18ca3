// tlab/tool/commands/replay.cc: `tlab replay`: re-runs one case of a JSON report
// (--report) from what the report recorded: its scenario document, strategy,
// mutant, seed, operations and budget. Says on stderr whether the recorded
// verdict was reproduced; prints the table (or JSON) of the one case.
//
// --repeat N replays it N times (plan/trials.h) and says "reproduced k/N".
// The exit code, from the first row that holds:
//   | replay                                        | exit                            |
//   |-----------------------------------------------|---------------------------------|
//   | Ctrl-C / a --report that cannot be written    | 130 / 3                         |
//   | every trial's verdict is the recorded one     | that verdict's: 0 pass, 1 fail, |
//   |                                               | 3 error or timeout              |
//   | a trial ended in error (recorded: not error)  | 3: the replay decided nothing   |
//   | otherwise, a trial's verdict differs          | 4 kExitNotReproduced            |
//
// A simulated case (its record has "sim") must reproduce exactly, not just its
// verdict: every trial is compared with the record by first_difference
// (report/result_diff.h: verdict, violations, counters with the schedule's trace
// hash, histograms); the first trial that differs is exit 4, naming the
// difference.
//
// --minimise shrinks a simulated failure: the fewest operations (same seed, same
// scheduler) whose run still fails with one of the recorded violations, found by
// bisection over [1, recorded operations] (a failure is not monotonic in the
// operation count, so this is a local minimum: every count tried is said), then
// replayed once more and written as the report: a short schedule that `tlab
// replay` reproduces exactly. Exit 1 when the minimised case fails (it always
// does: the recorded count is the upper bound), 2 when the case is not a
// simulated failure.
#include <algorithm>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/strategies.h"
#include "cli/common.h"
#include "base/interrupt.h"
#include "cli/subject_option.h"
#include "plan/trials.h"
#include "report/result_diff.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

namespace {

struct ReplayOptions {
  std::string report;
  std::string case_id;
  std::uint32_t repeat = 1;
  bool minimise = false;
  OutputOptions outputs;  // --report and --json (no --junit)
};

// verdict_counts: "fail 3/5, pass 2/5" (N > 1) or "pass" (N = 1), in verdict order.
std::string verdict_counts(const std::vector<Verdict>& verdicts) {
  std::map<Verdict, std::size_t> n;
  for (Verdict v : verdicts) ++n[v];
  if (verdicts.size() == 1) return std::string(name_of(verdicts.front()));
  std::string out;
  for (const auto& [v, k] : n) {
    out += fmt::format("{}{} {}/{}", out.empty() ? "" : ", ", name_of(v), k, verdicts.size());
  }
  return out;
}

class ReplayCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description("re-run one case of a report from its recorded seed");
    sub.add_option("REPORT", o_.report, "a JSON report written by --report")
        ->type_name("FILE")
        ->required();
    sub.add_option("--case", o_.case_id, "the case id (default: the only failing case)")
        ->type_name("ID");
    sub.add_option("--repeat", o_.repeat,
                   "replay N times; exit with the recorded verdict's code only if all N "
                   "reproduce it, else 4")
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    sub.add_flag("--minimise", o_.minimise,
                 "shrink a simulated failure to the fewest operations that still fail with a "
                 "recorded violation (same seed and scheduler); --report gets the short case")
        ->excludes("--repeat");
    add_outputs(sub, o_.outputs, /*junit=*/false);
    sub.footer(
        "Exit codes: the replayed verdict's when every replay reproduces the recorded one (0 "
        "pass, 1 fail, 3 error or timeout); 4 not reproduced (a replay's verdict differs); 2 "
        "bad input or usage; 3 internal error or unwritable output; 130 interrupted.");
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
    ov.sim = target->sim;
    ov.subject = subject;
    std::vector<Scenario> scenarios{std::move(*scenario)};
    const std::vector<CaseSpec> specs{
        plan_case(scenarios.front(), target->strategy, mutant, ov, /*expect_fail=*/false)};
    auto runner = runner_or_null(env);
    if (!runner) return kExitInternal;
    ExecuteOptions options;
    options.command = "replay";
    options.show_progress = env.stderr_is_tty;
    if (o_.minimise) return minimise(*target, specs.front(), scenarios, *runner, options, env);
    if (target->sim) return replay_exactly(*target, specs, scenarios, *runner, options, env);
    if (o_.repeat > 1) options.trials = o_.repeat;
    const Report report = execute_plan(specs, scenarios, *runner, options);
    const int written = finish(report, o_.outputs, env);
    if (report.interrupted || report.cases.empty()) return written;
    if (written == kExitInternal && report.exit_code() != kExitInternal) return written;
    return judge_replay(*target, report.cases.front(), report.exit_code(), env);
  }

 private:
  // replay_exactly: a simulated case, --repeat times one run each; every run must
  // equal the record (first_difference). Exit as the file's table says.
  int replay_exactly(const ReplayTarget& target, const std::vector<CaseSpec>& specs,
                     const std::vector<Scenario>& scenarios, Runner& runner,
                     const ExecuteOptions& options, const CliEnv& env) const {
    Report report;
    for (std::uint32_t i = 1; i <= o_.repeat; ++i) {
      report = execute_plan(specs, scenarios, runner, options);
      if (report.interrupted || report.cases.empty()) return finish(report, o_.outputs, env);
      const CaseResult& got = report.cases.front().result;
      if (auto diff = first_difference(target.recorded, got)) {
        const int written = finish(report, o_.outputs, env);
        *env.err << fmt::format("replay of {}: NOT reproduced exactly in simulation (replay {}/{}): "
                                "{}\n",
                                target.case_id, i, o_.repeat, *diff);
        if (written == kExitInternal) return written;
        return got.verdict == Verdict::kError && target.recorded.verdict != Verdict::kError
                   ? kExitInternal
                   : kExitNotReproduced;
      }
    }
    const int written = finish(report, o_.outputs, env);
    const auto& counters = report.cases.front().result.counters;
    const auto hash = counters.find("sim_trace_hash");
    *env.err << fmt::format(
        "replay of {}: recorded verdict {}, replayed verdict {}: reproduced exactly in "
        "simulation {}/{} (verdict, violations, counters, histograms; schedule trace 0x{:016x})\n",
        target.case_id, target.recorded_verdict, target.recorded_verdict, o_.repeat, o_.repeat,
        hash == counters.end() ? 0 : hash->second);
    if (written == kExitInternal) return written;
    return report.exit_code();
  }

  // minimise: the --minimise search (the file's header says how).
  int minimise(const ReplayTarget& target, const CaseSpec& spec,
               const std::vector<Scenario>& scenarios, Runner& runner,
               const ExecuteOptions& options, const CliEnv& env) const {
    if (!target.sim || target.recorded.verdict != Verdict::kFail) {
      *env.err << fmt::format("tlab: --minimise: case {} is not a simulated failure (it needs a "
                              "report of `--sim` with verdict fail)\n",
                              target.case_id);
      return kExitBadInput;
    }
    // Fails like the record: verdict fail with a violation the record has.
    auto run_with = [&](std::uint64_t ops, Report& out) {
      CaseSpec s = spec;
      s.operations = ops;
      out = execute_plan({s}, scenarios, runner, options);
      if (out.interrupted || out.cases.empty()) return false;
      const CaseResult& got = out.cases.front().result;
      if (got.verdict != Verdict::kFail) return false;
      for (const auto& [key, v] : got.violations) {
        if (target.recorded.violations.contains(key)) return true;
      }
      return false;
    };
    std::uint64_t lo = 1, hi = spec.operations;
    Report report;
    std::string tried;
    while (lo < hi && !interrupted()) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const bool fails = run_with(mid, report);
      tried += fmt::format(" {}:{}", mid, fails ? "fail" : "pass");
      (fails ? hi : lo) = fails ? mid : mid + 1;
    }
    if (interrupted()) return kExitInterrupted;
    run_with(hi, report);  // the minimised case, as the report holds it
    const auto steps = [](const CaseResult& r) {
      const auto it = r.counters.find("sim_steps");
      return it == r.counters.end() ? std::uint64_t{0} : it->second;
    };
    const int code = finish(report, o_.outputs, env);
    *env.err << fmt::format(
        "minimised {}: operations {} -> {}, schedule {} -> {} steps (tried{}); `tlab replay` of "
        "this report reproduces it exactly\n",
        target.case_id, spec.operations, hi, steps(target.recorded),
        steps(report.cases.front().result), tried);
    return code;
  }

  // judge_replay: says whether `replayed` reproduced the recorded verdict, and
  // returns the exit code (the table at the top of this file).
  static int judge_replay(const ReplayTarget& target, const CaseRecord& replayed, int code,
                          const CliEnv& env) {
    const std::vector<Verdict> verdicts =
        replayed.trials ? replayed.trials->verdicts : std::vector<Verdict>{replayed.result.verdict};
    const std::string& recorded = target.recorded_verdict;
    const auto k = static_cast<std::size_t>(std::count_if(
        verdicts.begin(), verdicts.end(), [&](Verdict v) { return name_of(v) == recorded; }));
    const std::size_t n = verdicts.size();
    if (k == n) {
      *env.err << (n == 1 ? fmt::format("replay of {}: recorded verdict {}, replayed verdict {} "
                                        "(reproduced)\n",
                                        target.case_id, recorded, recorded)
                          : fmt::format("replay of {}: recorded verdict {}, replayed verdict {} "
                                        "in every trial (reproduced {}/{})\n",
                                        target.case_id, recorded, recorded, k, n));
      return code;
    }
    const bool errored = std::any_of(verdicts.begin(), verdicts.end(),
                                     [](Verdict v) { return v == Verdict::kError; });
    *env.err << fmt::format("replay of {}: NOT reproduced: recorded {}, replayed {}{}\n",
                            target.case_id, recorded, verdict_counts(verdicts),
                            n > 1 ? fmt::format(" (reproduced {}/{})", k, n) : "");
    if (errored && recorded != name_of(Verdict::kError)) {
      *env.err << "tlab: a replay ended in error, so it decided nothing (exit 3)\n";
      return kExitInternal;
    }
    return kExitNotReproduced;
  }

 private:
  ReplayOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_replay_command() { return std::make_unique<ReplayCommand>(); }

}  // namespace tlab::tool
