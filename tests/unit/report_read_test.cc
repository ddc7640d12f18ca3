// Tests for tool/report/report_read.h: a report read back is the report that was
// written. Every optional field of a case record (the subject, the simulation, the
// detection search, the trials, the plan position) must survive, or a merged
// report silently drops it (a simulated case that `tlab replay` of a merged report
// would rerun on real threads).
#include "report/report_read.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "plan/plan.h"
#include "plan/trials.h"
#include "support/fake_runner.h"
#include "support/scenario_doc.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

// A record with every optional field set reads back to the same JSON.
TEST(ReportReadTest, EveryOptionalCaseFieldSurvivesTheRoundTrip) {
  const std::vector<Scenario> scenarios{testing::waiter_scenario("alpha")};
  Overrides o;
  o.simulate_mutants = true;
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec& s) { return s.mutant.has_value(); };
  ExecuteOptions options{"check", false, {}};
  options.search_rounds = 3;
  Report report = execute_plan(plan_check(scenarios, o), scenarios, runner, options);
  ASSERT_GE(report.cases.size(), 3u);
  CaseRecord& mutant = report.cases.back();
  ASSERT_TRUE(mutant.sim && mutant.search_rounds);
  mutant.sim->strategy = SimStrategy::kPct;
  mutant.sim->pct_depth = 5;
  CaseRecord& plain = report.cases.front();
  plain.subject_spec = "libuv";
  plain.plan_index = 0;
  const CaseSpec spec = plan_case(scenarios[0], "hashed_wheel", std::nullopt, {}, false);
  CaseResult pass;
  pass.verdict = Verdict::kPass;
  CaseResult fail;
  fail.verdict = Verdict::kFail;
  fail.violations["double_resume"] = {1, "twice"};
  report.cases[1] = fold_trials(spec, {pass, fail});

  const fs::path file =
      fs::temp_directory_path() / ("tlab-report-read-" + std::to_string(::getpid()) + ".json");
  const std::string written = report.to_json().dump(2);
  std::ofstream(file) << written;
  InputErrors errors;
  const auto read = read_report(file.string(), errors);
  fs::remove(file);
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->report.to_json().dump(2), written);
}

}  // namespace
}  // namespace tlab::tool
