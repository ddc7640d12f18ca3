// Tests for tool/plan/plan.h's detection search: a listed mutant is searched for in
// rounds over its strategies, each at a fresh seed, stopping at the first catch;
// its records say how many rounds ran and carry the catching seed; a pair no round
// catches survives; one round is the old one-run-per-strategy plan; trials run no
// search; and check simulates the mutant cases of every engine, but not those of a
// scenario on a built-in subject, nor a TSan-only catch. Scripted
// runs (tests/support/fake_runner.h): which seed catches is chosen by the test.
#include "plan/plan.h"

#include <gtest/gtest.h>

#include <set>

#include "base/embedded.h"
#include "plan/trials.h"
#include "report/console.h"
#include "support/fake_runner.h"
#include "support/scenario_doc.h"

namespace tlab::tool {
namespace {

// A timer-service scenario (it runs under simulation) with one listed mutant on
// two strategies, seed 3.
Scenario service_scenario() { return testing::waiter_scenario("alpha"); }

// A timed-wait-group scenario: its engine runs under simulation too.
Scenario wait_group_scenario() {
  return testing::scenario_from(
      {{"name", "beta"},
       {"description", "plan test"},
       {"engine", {{"strategies", {"binary_heap"}}}},
       {"actors",
        {{{"role", "wait_group_member"}, {"count", 1}, {"delay_us", {{"fixed", 100}}}},
         {{"role", "wait_group_waiter"}, {"count", 1}, {"timeout_us", {{"fixed", 100}}}}}},
       {"run", {{"operations", 10}, {"budget_s", 2}, {"seed", 6}}},
       {"catches", {"wait_group_plain_counter"}}});
}

// A scenario on a built-in subject (engine.subject): the generic driver does not
// run under simulation.
Scenario subject_scenario() {
  return testing::scenario_from(
      {{"name", "gamma"},
       {"description", "plan test"},
       {"engine", {{"subject", "sharded_service"}, {"tick_us", 100}, {"clock", "steady"}}},
       {"actors",
        {{{"role", "scheduler"}, {"count", 1}, {"delay_us", {{"fixed", 100}}}},
         {{"role", "timer_thread"}, {"count", 1}}}},
       {"run", {{"operations", 10}, {"budget_s", 2}, {"seed", 7}}},
       {"catches", {"sharded_cancel_wrong_shard"}}});
}

std::vector<CaseSpec> mutant_specs(const std::vector<Scenario>& scenarios, Overrides o = {}) {
  std::vector<CaseSpec> out;
  for (CaseSpec& s : plan_check(scenarios, o)) {
    if (s.expect_fail) out.push_back(std::move(s));
  }
  return out;
}

ExecuteOptions search(std::uint32_t rounds) {
  ExecuteOptions o{"check", false, {}};
  o.search_rounds = rounds;
  return o;
}

// A mutant that only the third round's seed on hashed_wheel shows is caught there:
// both strategies ran three rounds (seeds 3, 4, 5), the catching record carries
// seed 5 and says so, and the gate passes.
TEST(PlanTest, SearchStopsAtTheFirstCatchingRound) {
  const std::vector<Scenario> scenarios{service_scenario()};
  const auto specs = mutant_specs(scenarios);
  ASSERT_EQ(specs.size(), 2u);
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec& s) {
    return s.strategy == "hashed_wheel" && s.seed == seed_for_round(3, 3);
  };
  const Report report = execute_plan(specs, scenarios, runner, search(10));
  std::vector<std::uint64_t> seeds;
  for (const CaseSpec& s : runner.seen) seeds.push_back(s.seed);
  EXPECT_EQ(seeds, (std::vector<std::uint64_t>{3, 3, 4, 4, 5, 5}));
  ASSERT_EQ(report.cases.size(), 2u);
  EXPECT_EQ(report.cases[0].search_rounds, 3u);
  EXPECT_FALSE(report.cases[0].caught());
  EXPECT_EQ(report.cases[1].search_rounds, 3u);
  EXPECT_TRUE(report.cases[1].caught());
  EXPECT_EQ(report.cases[1].seed, 5u);
  EXPECT_DOUBLE_EQ(report.cases[1].result.duration_s, 0.03);  // summed over its rounds
  EXPECT_EQ(report.exit_code(), 0);
  const std::string table = format_table(report, false);
  EXPECT_NE(table.find("caught in search round 3"), std::string::npos) << table;
}

// A pair no round catches survives after every round ran on every strategy.
TEST(PlanTest, PairNoRoundCatchesSurvives) {
  const std::vector<Scenario> scenarios{service_scenario()};
  test::FakeRunner runner;
  const Report report = execute_plan(mutant_specs(scenarios), scenarios, runner, search(4));
  EXPECT_EQ(runner.seen.size(), 8u);
  EXPECT_EQ(report.summary().mutants_survived, std::vector<std::string>{"alpha:token_flag_only"});
  EXPECT_EQ(report.exit_code(), 1);
  for (const CaseRecord& c : report.cases) EXPECT_EQ(c.search_rounds, 4u);
  // The report, search_rounds included, is valid against its schema.
  static const SchemaValidator validator(embedded_report_schema());
  InputErrors errors;
  EXPECT_TRUE(
      validator.validate(nlohmann::json::parse(report.to_json().dump()), "report.json", errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
}

// One round is one run per strategy, stopping at the first strategy that catches;
// a strategy never run is not owed.
TEST(PlanTest, OneRoundIsOneRunPerStrategy) {
  const std::vector<Scenario> scenarios{service_scenario()};
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec& s) { return s.strategy == "binary_heap"; };
  const Report report = execute_plan(mutant_specs(scenarios), scenarios, runner, search(1));
  EXPECT_EQ(runner.seen.size(), 1u);
  ASSERT_EQ(report.cases.size(), 1u);
  EXPECT_TRUE(report.cases[0].caught());
  EXPECT_EQ(report.planned, 1u);
}

// --repeat measures one run's detection: trials run no search.
TEST(PlanTest, TrialsRunNoSearch) {
  const std::vector<Scenario> scenarios{service_scenario()};
  test::FakeRunner runner;
  ExecuteOptions o = search(10);
  o.trials = 2;
  const Report report = execute_plan(mutant_specs(scenarios), scenarios, runner, o);
  EXPECT_EQ(runner.seen.size(), 4u);  // 2 strategies x 2 trials, every one at seed 3
  for (const CaseSpec& s : runner.seen) EXPECT_EQ(s.seed, 3u);
  for (const CaseRecord& c : report.cases) EXPECT_FALSE(c.search_rounds);
}

// check simulates the listed mutants of every engine (the timer service's and the
// wait group's here), and leaves the clean cases, and a scenario on a built-in
// subject, on real threads.
TEST(PlanTest, CheckSimulatesMutantsWhereTheEngineCan) {
  const std::vector<Scenario> scenarios{service_scenario(), wait_group_scenario(),
                                        subject_scenario()};
  Overrides o;
  o.simulate_mutants = true;
  std::set<std::string> simulated;
  int subject_mutants = 0;
  for (const CaseSpec& s : plan_check(scenarios, o)) {
    const bool want = s.expect_fail && s.scenario->name != "gamma";
    EXPECT_EQ(s.sim.has_value(), want) << s.id;
    if (s.sim) simulated.insert(s.scenario->name);
    subject_mutants += s.expect_fail && s.scenario->name == "gamma";
  }
  EXPECT_EQ(simulated, (std::set<std::string>{"alpha", "beta"}));
  EXPECT_EQ(subject_mutants, 1);
  // Without it (the kill matrix's scenario layer) every case runs real threads.
  for (const CaseSpec& s : plan_check(scenarios, {})) EXPECT_FALSE(s.sim.has_value()) << s.id;
}

}  // namespace
}  // namespace tlab::tool
