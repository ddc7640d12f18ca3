// Tests for tool/plan/trials.h: N trials folded into one record with a strict gate,
// the tally and its median, the report that carries them against its schema, and
// the seeds of --vary-seed, and the CLI over flaky scripted runs (replay --repeat,
// run --until-fail). Scripted trials (tests/support/fake_runner.h), so the flaky
// outcomes the stress layer gives by chance are given here on purpose.
#include "plan/trials.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "base/embedded.h"
#include "base/interrupt.h"
#include "cli/cli.h"
#include "plan/plan.h"
#include "report/console.h"
#include "support/cli_run.h"
#include "support/fake_runner.h"

namespace tlab::tool {
namespace {

Scenario make_scenario() {
  static const ScenarioLoader loader;
  nlohmann::json doc = {
      {"name", "alpha"},
      {"description", "trials test"},
      {"engine", {{"strategies", {"binary_heap", "hashed_wheel"}}}},
      {"actors", {{{"role", "waiter"}, {"count", 1}, {"timeout_us", {{"fixed", 100}}}}}},
      {"run", {{"operations", 50}, {"budget_s", 2}, {"seed", 3}}},
      {"catches", {"token_flag_only"}}};
  InputErrors errors;
  auto s = loader.load_document(doc, "alpha.json", errors);
  if (!s) throw std::runtime_error(errors.front().str());
  return *s;
}

CaseResult trial(Verdict v, std::optional<std::uint64_t> detect_us = std::nullopt) {
  CaseResult r;
  r.verdict = v;
  r.duration_s = 0.5;
  if (v == Verdict::kFail) r.violations["double_resume"] = {1, "trial failed"};
  if (detect_us) r.counters["detect_us"] = *detect_us;
  return r;
}

// A scenario's run.sim makes its cases simulated; --sim overrides the mode, and a
// case on a subject runs real threads whatever the file says.
TEST(TrialsTest, RunSimPlansSimulatedCasesUnlessOverridden) {
  Scenario s = make_scenario();
  s.run.sim = SimSpec{.strategy = SimStrategy::kPct};
  const CaseSpec plain = plan_case(s, "binary_heap", std::nullopt, {}, false);
  ASSERT_TRUE(plain.sim.has_value());
  EXPECT_EQ(plain.sim->strategy, SimStrategy::kPct);
  Overrides random;
  random.sim = SimSpec{.strategy = SimStrategy::kRandom};
  EXPECT_EQ(plan_case(s, "binary_heap", std::nullopt, random, false).sim->strategy,
            SimStrategy::kRandom);
  Overrides subject;
  SubjectFacts libuv;
  libuv.spec = libuv.name = "libuv";
  subject.subject = libuv;
  EXPECT_FALSE(plan_case(s, "libuv", std::nullopt, subject, false).sim.has_value());
  s.run.sim.reset();
  EXPECT_FALSE(plan_case(s, "binary_heap", std::nullopt, {}, false).sim.has_value());
}

// A plain case fails if any trial fails: it shows the first failing trial, counts
// the failures, sums the durations and has no detection median.
TEST(TrialsTest, PlainCasePassesOnlyIfEveryTrialPasses) {
  const std::vector<Scenario> scenarios{make_scenario()};
  const CaseSpec spec = plan_case(scenarios[0], "binary_heap", std::nullopt, {}, false);
  CaseRecord r =
      fold_trials(spec, {trial(Verdict::kPass), trial(Verdict::kFail, 7), trial(Verdict::kPass)});
  EXPECT_EQ(r.result.verdict, Verdict::kFail);
  ASSERT_TRUE(r.trials);
  EXPECT_EQ(r.trials->failures, 1u);
  EXPECT_EQ(r.trials->verdicts,
            (std::vector<Verdict>{Verdict::kPass, Verdict::kFail, Verdict::kPass}));
  EXPECT_FALSE(r.trials->median_detect_us);
  EXPECT_DOUBLE_EQ(r.result.duration_s, 1.5);
  r = fold_trials(spec, {trial(Verdict::kPass), trial(Verdict::kPass)});
  EXPECT_EQ(r.result.verdict, Verdict::kPass);
  EXPECT_EQ(r.trials->failures, 0u);
}

// A mutant case counts as caught only if every trial caught it (a timeout counts,
// as in one run); its median detect_us is the lower median of the catching trials.
TEST(TrialsTest, MutantCaughtOnlyIfCaughtInEveryTrial) {
  const std::vector<Scenario> scenarios{make_scenario()};
  const CaseSpec spec = plan_case(scenarios[0], "binary_heap", Mutant::kTokenFlagOnly, {}, true);
  CaseRecord r = fold_trials(
      spec, {trial(Verdict::kFail, 300), trial(Verdict::kPass), trial(Verdict::kFail, 100)});
  EXPECT_FALSE(r.caught());
  EXPECT_EQ(r.result.verdict, Verdict::kPass);  // the trial that missed it is shown
  EXPECT_EQ(r.trials->failures, 2u);
  EXPECT_EQ(r.trials->median_detect_us, 100u);  // lower median of {100, 300}
  r = fold_trials(spec, {trial(Verdict::kFail, 300), trial(Verdict::kTimeout),
                         trial(Verdict::kFail, 100), trial(Verdict::kFail, 200)});
  EXPECT_TRUE(r.caught());
  EXPECT_EQ(r.trials->failures, 4u);
  EXPECT_EQ(r.trials->median_detect_us, 200u);
}

// An error trial makes the case an error whatever the others did: the gate cannot
// call a case clean, or a mutant caught, on a trial that decided nothing.
TEST(TrialsTest, AnErrorTrialMakesTheCaseAnError) {
  const std::vector<Scenario> scenarios{make_scenario()};
  const CaseSpec spec = plan_case(scenarios[0], "binary_heap", Mutant::kTokenFlagOnly, {}, true);
  const CaseRecord r =
      fold_trials(spec, {trial(Verdict::kFail, 5), trial(Verdict::kPass), trial(Verdict::kError)});
  EXPECT_EQ(r.result.verdict, Verdict::kError);
  EXPECT_EQ(r.trials->failures, 1u);
}

// check with trials: a mutant caught 1 of 2 times on every strategy survives (exit
// 1), the report validates against its schema with trials, failures and
// trial_verdicts, and the table says "detected 1/2".
TEST(TrialsTest, CheckWithTrialsGatesStrictlyAndValidates) {
  const std::vector<Scenario> scenarios{make_scenario()};
  const auto specs = plan_check(scenarios, {});
  test::FakeRunner runner;
  int mutant_runs = 0;
  runner.fail_if = [&](const CaseSpec& s) { return s.mutant && ++mutant_runs % 2 == 1; };
  ExecuteOptions options{"check", false, {}};
  options.trials = 2;
  options.until_fail = UntilFail{2, 5, true};
  const Report report = execute_plan(specs, scenarios, runner, options);
  EXPECT_EQ(runner.seen.size(), 8u);  // 4 cases x 2 trials; no strategy caught it 2/2
  EXPECT_EQ(report.summary().mutants_survived, std::vector<std::string>{"alpha:token_flag_only"});
  EXPECT_EQ(report.exit_code(), 1);
  const auto j = report.to_json();
  static const SchemaValidator validator(embedded_report_schema());
  InputErrors errors;
  EXPECT_TRUE(validator.validate(nlohmann::json::parse(j.dump()), "report.json", errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
  EXPECT_EQ(j.at("cases").at(2).at("failures"), 1);
  EXPECT_EQ(j.at("until_fail").at("round"), 2);
  const std::string table = format_table(report, false);
  EXPECT_NE(table.find("detected 1/2"), std::string::npos) << table;
  EXPECT_NE(table.find("round 2/5"), std::string::npos) << table;
}

// A report whose trials disagree with its tally's shape is refused by the schema:
// trials without failures, or failures beyond 10000.
TEST(TrialsTest, SchemaRefusesATallyWithoutItsParts) {
  const std::vector<Scenario> scenarios{make_scenario()};
  const CaseSpec spec = plan_case(scenarios[0], "binary_heap", std::nullopt, {}, false);
  Report report;
  report.command = "check";
  report.cases.push_back(fold_trials(spec, {trial(Verdict::kPass)}));
  auto j = nlohmann::json::parse(report.to_json().dump());
  static const SchemaValidator validator(embedded_report_schema());
  InputErrors errors;
  EXPECT_TRUE(validator.validate(j, "ok.json", errors));
  j["cases"][0].erase("failures");
  EXPECT_FALSE(validator.validate(j, "bad.json", errors));
  j["cases"][0]["failures"] = 10001;
  EXPECT_FALSE(validator.validate(j, "bad.json", errors));
}

// --vary-seed: round 1 is the case's own seed, round r adds r - 1, and the sum
// wraps within [0, 2^53) so the seed stays exact in the JSON report.
TEST(TrialsTest, SeedForRoundStartsAtTheOwnSeedAndWraps) {
  EXPECT_EQ(seed_for_round(7, 1), 7u);
  EXPECT_EQ(seed_for_round(7, 3), 9u);
  const std::uint64_t max = (std::uint64_t{1} << 53) - 1;
  EXPECT_EQ(seed_for_round(max, 1), max);
  EXPECT_EQ(seed_for_round(max, 2), 0u);
}

// cli: runs `tlab args...` in-process on `runner`'s script.
testing::CliResult cli(test::FakeRunner& runner, std::vector<std::string> args) {
  args.insert(args.begin(), "tlab");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliEnv env{&out, &err, test::forward_to(runner)};
  clear_interrupt();
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), env);
  return {code, out.str(), err.str()};
}

std::string scratch(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tlab_trials_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

const std::string kSmall = std::string(TLAB_SOURCE_DIR) + "/tests/e2e/repeat/small_check.json";

// A failure that reproduces in 2 of 4 replays is not reproduced: exit 4,
// "NOT reproduced" with the counts, "reproduced 2/4".
TEST(TrialsTest, ReplayRepeatReproducedInSomeTrialsExitsFour) {
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec&) { return true; };
  const std::string report = scratch("fail.json");
  ASSERT_EQ(cli(runner, {"run", kSmall, "--report", report}).code, 1);
  int runs = 0;
  runner.fail_if = [&](const CaseSpec&) { return ++runs % 2 == 1; };
  const auto r = cli(runner, {"replay", report, "--repeat", "4"});
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(r.code, kExitNotReproduced) << r.err;
  EXPECT_NE(
      r.err.find("NOT reproduced: recorded fail, replayed pass 2/4, fail 2/4 (reproduced 2/4)"),
      std::string::npos)
      << r.err;
}

// A replay that ends in error decided nothing: exit 3, not 4, and it says why.
TEST(TrialsTest, ReplayEndingInErrorExitsThree) {
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec&) { return true; };
  const std::string report = scratch("fail_for_error.json");
  ASSERT_EQ(cli(runner, {"run", kSmall, "--report", report}).code, 1);
  runner.script["small_check/binary_heap"].verdict = Verdict::kError;
  const auto r = cli(runner, {"replay", report});
  EXPECT_EQ(r.code, kExitInternal) << r.err;
  EXPECT_NE(r.err.find("NOT reproduced: recorded fail, replayed error"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("decided nothing"), std::string::npos) << r.err;
}

// run --until-fail 5 stops after round 3, the first that fails: exactly 3 rounds
// ran, the report is round 3's, and it exits 1.
TEST(TrialsTest, UntilFailStopsAfterTheFailingRound) {
  test::FakeRunner runner;
  int runs = 0;
  runner.fail_if = [&](const CaseSpec&) { return ++runs == 3; };
  const std::string report = scratch("uf.json");
  const auto r = cli(runner, {"run", kSmall, "--until-fail", "5", "--report", report});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(runner.seen.size(), 3u);  // one case a round
  EXPECT_NE(r.err.find("round 2/5: no failure"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round 3/5 failed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("round 3/5"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(testing::slurp(report)).at("until_fail").at("round"), 3);
}

}  // namespace
}  // namespace tlab::tool
