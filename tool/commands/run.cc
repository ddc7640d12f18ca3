// tlab/tool/commands/run.cc: `tlab run`: scenarios (default: the built-in suite)
// on each scenario's strategies, or with --strategy, --mutant, --seed, --budget
// and --operations overriding every scenario; with --subject, on that subject
// instead of the engine (cli/subject_option.h). Exit 1 when a case fails.
//
// --until-fail N hunts a failure that does not show every run: the whole plan
// runs up to N rounds and stops after the first round with a failing case (exit
// 1, and --report/--json hold that round, its number in "until_fail"); N clean
// rounds exit 0 with "N rounds, no failure". Every round runs the cases' own seeds:
// the stress layer's threads are what vary, so this asks "does it fail again at
// this seed?". --vary-seed asks "does it fail at all?": round r runs each case at
// seed + r - 1 (plan/trials.h), and the report records the seed that failed, so
// `tlab replay` re-runs exactly that case.
#include <cstdint>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/shard_option.h"
#include "cli/subject_option.h"
#include "plan/trials.h"

namespace tlab::tool {

namespace {

// Seeds travel through JSON reports; 2^53 - 1 keeps them exact in every JSON reader.
constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;
constexpr std::uint64_t kMaxOperations = 100000000;

struct RunOptions {
  std::vector<std::string> paths;
  std::string strategy;
  std::string mutant;
  std::uint64_t seed = 0;
  std::string budget;
  std::uint64_t operations = 0;
  std::string subject;
  std::uint32_t until_fail = 0;
  bool vary_seed = false;
  SimOptions sim;
  std::string shard;
  OutputOptions outputs;
};

class RunCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub_ = &sub;
    sub.description("run scenarios (default: the built-in suite)");
    sub.add_option("PATHS", o_.paths, "scenario files or directories")->type_name("PATH");
    auto* strategy =
        sub.add_option("--strategy", o_.strategy, "one strategy, or all (default: each scenario's)")
            ->type_name("S")
            ->check(CLI::IsMember(strategy_names(/*with_all=*/true)));
    auto* mutant = sub.add_option("--mutant", o_.mutant, "turn on one mutant (see `tlab list mutants`)")
                       ->type_name("M")
                       ->check(mutant_check());
    add_subject_option(sub, o_.subject);
    // A subject is not core's engine: core's strategies and mutants are not in it.
    sub.get_option("--subject")->excludes(strategy)->excludes(mutant);
    add_sim_options(sub, o_.sim);
    // A subject's own threads are not tasks of tlab's simulation.
    sub.get_option("--sim")->excludes("--subject");
    sub.add_option("--seed", o_.seed, "override every scenario's seed")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{0}, kMaxSeed));
    sub.add_option("--budget", o_.budget, "watchdog budget per case, e.g. 5s, 500ms (max 600s)")
        ->type_name("D")
        ->check(duration_check());
    sub.add_option("--operations", o_.operations, "override every scenario's operation count")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, kMaxOperations));
    sub.add_option("--until-fail", o_.until_fail,
                   "run the plan up to N rounds (each at the cases' own seeds), stop at the "
                   "first round with a failing case and report that round")
        ->type_name("N")
        ->check(CLI::Range(std::uint32_t{1}, kMaxTrials));
    sub.add_flag("--vary-seed", o_.vary_seed,
                 "with --until-fail: round r runs each case at its seed + r - 1")
        ->needs("--until-fail");
    add_shard_option(sub, o_.shard);
    add_outputs(sub, o_.outputs, /*junit=*/true);
    add_verbose_option(sub, o_.outputs.verbose);
    add_example(sub, "tlab run scenarios/fixed_rate_drift.json --strategy binary_heap --seed 7");
  }

  int run(const CliEnv& env) override {
    Overrides ov;
    if (!o_.strategy.empty()) ov.strategy = o_.strategy;
    if (!o_.mutant.empty()) ov.mutant = mutant_from_name(o_.mutant);
    if (sub_->count("--seed") > 0) ov.seed = o_.seed;
    if (sub_->count("--operations") > 0) ov.operations = o_.operations;
    if (!o_.budget.empty()) ov.budget_s = parse_duration_s(o_.budget);
    InputErrors errors;
    ov.sim = sim_spec_of(*sub_, o_.sim, errors);
    if (ov.sim && ov.mutant && !mutant_under_sim(*ov.mutant)) {
      errors.push_back(
          {"--mutant", "",
           fmt::format("{} acts only where simulation never runs ({}; a simulated "
                       "service runs its own thread): run it without --sim",
                       o_.mutant, kMutantInfo[static_cast<std::size_t>(*ov.mutant)].component)});
    }
    if (!errors.empty()) return bad_input(errors, env);
    std::optional<SubjectFacts> subject;
    if (!subject_overrides(o_.subject, env, ov, subject)) return kExitBadInput;
    Repetition repeat;
    if (sub_->count("--until-fail") > 0) repeat.rounds = o_.until_fail;
    repeat.vary_seed = o_.vary_seed;
    std::optional<Shard> shard;
    if (auto stop = resolve_shard_option(*sub_, o_.shard, env, shard)) return *stop;
    ScenarioRun r = run_scenarios(
        "run", o_.paths, [&](const std::vector<Scenario>& s) { return plan_run(s, ov); },
        o_.outputs, env, subject ? &*subject : nullptr, repeat, ov.sim, shard);
    if (r.exit) return *r.exit;
    const int code = finish(r.report, o_.outputs, env);
    if (const auto& u = r.report.until_fail; u && !r.report.interrupted) {
      if (r.report.exit_code() == kExitOk) {
        *env.err << fmt::format("tlab: {} rounds, no failure\n", u->rounds);
      } else {
        *env.err << fmt::format(
            "tlab: round {}/{} {}{}; the report is of that round\n", u->round, u->rounds,
            r.report.exit_code() == kExitViolation ? "failed" : "ended in error",
            u->vary_seed ? " (its seeds are in the report)" : "");
      }
    }
    return code;
  }

 private:
  CLI::App* sub_ = nullptr;
  RunOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace tlab::tool
