// Tests for tool/report/report.h, junit.h, console.h and plan.h: the report document and
// its schema, exit codes, atomic writes, JUnit text, the table, planning and
// interruption, all with a scripted runner (tests/support/fake_runner.h).
#include "report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/embedded.h"
#include "base/interrupt.h"
#include "plan/plan.h"
#include "report/console.h"
#include "report/junit.h"
#include "subjects/subjects.h"
#include "support/ci_report.h"
#include "support/fake_runner.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

Scenario make_scenario(const std::string& name, std::vector<Mutant> catches = {}) {
  static const ScenarioLoader loader;
  nlohmann::json doc = {
      {"name", name},
      {"description", "report test"},
      {"engine", {{"strategies", {"binary_heap", "hashed_wheel"}}}},
      {"actors", {{{"role", "waiter"}, {"count", 1}, {"timeout_us", {{"fixed", 100}}}}}},
      {"run", {{"operations", 50}, {"budget_s", 2}, {"seed", 3}}}};
  for (Mutant m : catches) doc["catches"].push_back(std::string(name_of(m)));
  InputErrors errors;
  auto s = loader.load_document(doc, name + ".json", errors);
  if (!s) throw std::runtime_error(errors.front().str());
  return *s;
}

void expect_schema_valid(const nlohmann::ordered_json& report) {
  static const SchemaValidator validator(embedded_report_schema());
  InputErrors errors;
  EXPECT_TRUE(validator.validate(nlohmann::json::parse(report.dump()), "report.json", errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("tlab_report_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A report with every verdict, violations, counters and histograms validates
// against tool/report/report_schema.json.
TEST(ReportTest, ReportValidatesAgainstItsSchema) {
  std::vector<Scenario> scenarios{make_scenario("alpha", {Mutant::kTokenFlagOnly})};
  test::FakeRunner runner;
  runner.script["alpha/hashed_wheel"].verdict = Verdict::kTimeout;
  runner.script["alpha/hashed_wheel"].message = "waiter#0: parked since 2.0 s";
  runner.fail_if = [](const CaseSpec& s) { return s.mutant.has_value(); };
  const auto specs = plan_check(scenarios, {});
  Report report = execute_plan(specs, scenarios, runner, {"check", false, {}});
  const auto j = report.to_json();
  expect_schema_valid(j);
  EXPECT_EQ(j.at("schema_version"), kReportSchemaVersion);
  EXPECT_EQ(j.at("cases").size(), 3u);  // 2 strategies + the mutant caught on the first
  EXPECT_EQ(j.at("cases")[1].at("verdict"), "timeout");
  EXPECT_EQ(j.at("cases")[2].at("mutant"), "token_flag_only");
  EXPECT_EQ(j.at("cases")[2].at("violations").at("double_resume").at("count"), 2);
  EXPECT_EQ(j.at("cases")[0].at("mutant"), nullptr);
  EXPECT_EQ(j.at("cases")[0].at("latency").at("fire_lateness").at("count"), 100);
  EXPECT_EQ(j.at("scenarios").at("alpha").at("document").at("name"), "alpha");
  EXPECT_EQ(j.at("summary").at("mutants_caught")[0], "alpha:token_flag_only");
  EXPECT_EQ(j.at("summary").at("exit_code"), 3);
}

// The environment names the compiler, sanitizer, CPUs, kernel, timer slack and
// version, and the sanitizer matches how this test was built.
TEST(ReportTest, EnvironmentIsDetected) {
  const Environment e = Environment::detect();
  EXPECT_NE(e.compiler.find(' '), std::string::npos);
  EXPECT_FALSE(e.build_type.empty());
  EXPECT_GE(e.cpus_online, 1);
  EXPECT_GE(e.cpus_available, 1);
  EXPECT_EQ(e.kernel.rfind("Linux", 0), 0u);
  EXPECT_GE(e.timer_slack_ns, 0);
  EXPECT_FALSE(e.git_revision.empty());
  EXPECT_FALSE(e.tlab_version.empty());
#if defined(__SANITIZE_THREAD__)
  EXPECT_NE(e.sanitizer.find("thread"), std::string::npos);
#elif !defined(TLAB_SANITIZER) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(e.sanitizer, "none");
#endif
}

// Exit codes: pass 0; failure 1; error or timeout 3 (3 wins over 1); a surviving
// mutant 1; a mutant caught by a timeout 0; interrupted 130.
TEST(ReportTest, ExitCodesFollowVerdicts) {
  auto rec = [](Verdict v, bool expect_fail = false) {
    CaseRecord c;
    c.id = "s/x";
    c.scenario = "s";
    c.strategy = "binary_heap";
    c.expect_fail = expect_fail;
    if (expect_fail) c.mutant = "token_flag_only";
    c.result.verdict = v;
    return c;
  };
  auto code = [](std::vector<CaseRecord> cases, bool interrupted = false) {
    Report r;
    r.cases = std::move(cases);
    r.planned = r.cases.size();
    r.interrupted = interrupted;
    return r.exit_code();
  };
  EXPECT_EQ(code({rec(Verdict::kPass)}), 0);
  EXPECT_EQ(code({rec(Verdict::kPass), rec(Verdict::kFail)}), 1);
  EXPECT_EQ(code({rec(Verdict::kFail), rec(Verdict::kError)}), 3);
  EXPECT_EQ(code({rec(Verdict::kTimeout)}), 3);
  EXPECT_EQ(code({rec(Verdict::kPass, true)}), 1);
  EXPECT_EQ(code({rec(Verdict::kFail, true)}), 0);
  EXPECT_EQ(code({rec(Verdict::kTimeout, true)}), 0);
  EXPECT_EQ(code({rec(Verdict::kError, true)}), 3);
  EXPECT_EQ(code({rec(Verdict::kPass)}, true), 130);
}

// `check` plans every strategy without mutant, then each listed mutant on each
// strategy; a mutant caught on the first strategy is not run on the second, and a
// mutant that passes everywhere is reported as survived.
TEST(ReportTest, CheckStopsAtFirstCatchAndReportsSurvivors) {
  std::vector<Scenario> scenarios{
      make_scenario("alpha", {Mutant::kTokenFlagOnly, Mutant::kHeapUnstableTies})};
  const auto specs = plan_check(scenarios, {});
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[2].id, "alpha/binary_heap/token_flag_only");
  EXPECT_TRUE(specs[2].expect_fail);
  test::FakeRunner runner;
  runner.fail_if = [](const CaseSpec& s) { return s.mutant == Mutant::kTokenFlagOnly; };
  Report report = execute_plan(specs, scenarios, runner, {"check", false, {}});
  EXPECT_EQ(runner.seen.size(), 5u);  // token_flag_only skipped on hashed_wheel
  const Summary s = report.summary();
  EXPECT_EQ(s.planned, 5u);
  EXPECT_EQ(s.mutants_caught, std::vector<std::string>{"alpha:token_flag_only"});
  EXPECT_EQ(s.mutants_survived, std::vector<std::string>{"alpha:heap_unstable_ties"});
  EXPECT_EQ(report.exit_code(), 1);
}

// `run` overrides replace the scenario's strategy list, seed, operations and budget.
TEST(ReportTest, RunPlanAppliesOverrides) {
  std::vector<Scenario> scenarios{make_scenario("alpha"), make_scenario("beta")};
  auto specs = plan_run(scenarios, {});
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].id, "alpha/binary_heap");
  EXPECT_EQ(specs[0].seed, 3u);
  EXPECT_EQ(specs[0].operations, 50u);
  Overrides o;
  o.strategy = "all";
  o.mutant = Mutant::kCoroTimerLeak;
  o.seed = 11;
  o.operations = 5;
  o.budget_s = 0.5;
  specs = plan_run(scenarios, o);
  ASSERT_EQ(specs.size(), 2 * strategy_names().size());
  EXPECT_EQ(specs[0].id, "alpha/binary_heap/coro_timer_leak");
  EXPECT_EQ(specs[0].seed, 11u);
  EXPECT_EQ(specs[0].operations, 5u);
  EXPECT_DOUBLE_EQ(specs[0].budget_s, 0.5);
  EXPECT_FALSE(specs[0].expect_fail);
}

// Ctrl-C after the first case stops the run, keeps the finished case, marks the
// report interrupted (exit 130), and the partial report still validates.
TEST(ReportTest, InterruptWritesPartialReport) {
  clear_interrupt();
  std::vector<Scenario> scenarios{make_scenario("alpha")};
  test::FakeRunner runner;
  runner.interrupt_after = 1;
  std::size_t callbacks = 0;
  Report report = execute_plan(plan_run(scenarios, {}), scenarios, runner,
                               {"run", false, [&](const Report&) { ++callbacks; }});
  clear_interrupt();
  EXPECT_TRUE(report.interrupted);
  EXPECT_EQ(report.cases.size(), 1u);
  EXPECT_EQ(callbacks, 1u);
  EXPECT_EQ(report.summary().not_run, 1u);
  EXPECT_EQ(report.exit_code(), 130);
  const auto j = report.to_json();
  EXPECT_EQ(j.at("interrupted"), true);
  expect_schema_valid(j);
}

// A runner that throws yields verdict error with the exception text, not a crash.
TEST(ReportTest, RunnerExceptionBecomesError) {
  struct Throwing : Runner {
    CaseResult run_case(const CaseSpec&, const RunContext&) override {
      throw std::runtime_error("engine exploded");
    }
  } runner;
  std::vector<Scenario> scenarios{make_scenario("alpha")};
  Report report = execute_plan(plan_run(scenarios, {}), scenarios, runner, {"run", false, {}});
  ASSERT_EQ(report.cases.size(), 2u);
  EXPECT_EQ(report.cases[0].result.verdict, Verdict::kError);
  EXPECT_NE(report.cases[0].result.message.find("engine exploded"), std::string::npos);
  EXPECT_EQ(report.exit_code(), 3);
}

// write_file_atomic replaces the file whole, leaves no temporary behind, and on
// failure throws without creating the target.
TEST(ReportTest, AtomicWriteReplacesWholeFile) {
  const fs::path dir = temp_dir();
  const fs::path f = dir / "r.json";
  write_file_atomic(f.string(), "first");
  write_file_atomic(f.string(), "second, longer");
  EXPECT_EQ(read(f), "second, longer");
  EXPECT_EQ(fs::status(f).permissions() & fs::perms::others_read, fs::perms::others_read);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_THROW(write_file_atomic((dir / "missing" / "r.json").string(), "x"), std::system_error);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  InputErrors errors;
  EXPECT_FALSE(check_output_path((dir / "missing" / "r.json").string(), "--report", errors));
  EXPECT_FALSE(check_output_path(dir.string(), "--junit", errors));
  EXPECT_TRUE(check_output_path(f.string(), "--report", errors));
  EXPECT_EQ(errors.size(), 2u);
  fs::remove_all(dir);
}

// XML escaping covers the five specials and replaces control characters.
TEST(ReportTest, XmlEscapeHandlesSpecialsAndControls) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n", 6)), "x\xEF\xBF\xBDy\tz\n");
}

// JUnit XML has one testcase per case, a failure with the violation text for a
// failed case, an error for a timeout, and a failure for a surviving mutant.
TEST(ReportTest, JunitHasOneTestcasePerCase) {
  std::vector<Scenario> scenarios{make_scenario("alpha", {Mutant::kHeapUnstableTies})};
  test::FakeRunner runner;
  runner.script["alpha/binary_heap"].verdict = Verdict::kFail;
  runner.script["alpha/binary_heap"].violations["lost_wakeup"] = {1, "waiter <#3> & \"co\""};
  runner.script["alpha/hashed_wheel"].verdict = Verdict::kTimeout;
  Report report = execute_plan(plan_check(scenarios, {}), scenarios, runner, {"check", false, {}});
  const std::string xml = junit_xml(report);
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto p = xml.find(needle); p != std::string::npos; p = xml.find(needle, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<testcase "), 4u);
  EXPECT_EQ(count("<failure "), 3u);  // lost_wakeup + two surviving mutant cases
  EXPECT_EQ(count("<error "), 1u);
  EXPECT_NE(xml.find("waiter &lt;#3&gt; &amp; &quot;co&quot;"), std::string::npos);
  EXPECT_NE(xml.find("tests=\"4\" failures=\"3\" errors=\"1\""), std::string::npos);
}

// A passed case with findings its subject does not promise stays a pass in JUnit,
// and its <system-out> lists them (escaped); a passed case without any has no body.
TEST(ReportTest, JunitShowsUnpromisedFindingsOfPassedCases) {
  const Report report = testing::with_unpromised(testing::ci_report());
  const std::string xml = junit_xml(report);
  const auto at = xml.find("name=\"libuv\"");
  ASSERT_NE(at, std::string::npos);
  const auto end = xml.find("</testcase>", at);
  ASSERT_NE(end, std::string::npos);
  const std::string libuv = xml.substr(at, end - at);
  EXPECT_EQ(libuv.find("<failure"), std::string::npos);
  EXPECT_NE(libuv.find("<system-out>findings not promised by libuv"), std::string::npos);
  EXPECT_NE(libuv.find("early_fire: 70 (first: &lt;script&gt;"), std::string::npos);
  EXPECT_EQ(libuv.find("double_resume"), std::string::npos);  // a zero count is no finding
  EXPECT_NE(xml.find("name=\"hashed_wheel\" time=\"0.000\"/>"), std::string::npos);
}

// The table aligns every column and adds colour only when asked.
TEST(ReportTest, TableIsAlignedAndColourOptional) {
  std::vector<Scenario> scenarios{make_scenario("alpha"), make_scenario("a_much_longer_name")};
  test::FakeRunner runner;
  runner.script["alpha/binary_heap"].verdict = Verdict::kFail;
  runner.script["alpha/binary_heap"].violations["early_fire"] = {4, "timer 3 fired 20us early"};
  Report report = execute_plan(plan_run(scenarios, {}), scenarios, runner, {"run", false, {}});
  const std::string plain = format_table(report, false);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  std::istringstream lines(plain);
  std::string line;
  std::size_t verdict_col = std::string::npos;
  int rows = 0;
  while (std::getline(lines, line) && !line.empty()) {
    const std::size_t col =
        rows == 0 ? line.find("VERDICT") : line.find_first_of("pf", line.find(" 3 ") + 3);
    if (rows == 0) verdict_col = col;
    EXPECT_EQ(col, verdict_col) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 5);
  EXPECT_NE(plain.find("early_fire=4"), std::string::npos);
  EXPECT_NE(plain.find("4 cases: 3 passed, 1 failed"), std::string::npos);
  EXPECT_NE(format_table(report, true).find("\x1b["), std::string::npos);
}

// alpha_run: a run of scenario alpha on binary_heap whose one case the runner
// answers with `r`.
Report alpha_run(const CaseResult& r) {
  std::vector<Scenario> scenarios{make_scenario("alpha")};
  test::FakeRunner runner;
  runner.script["alpha/binary_heap"] = r;
  Overrides o;
  o.strategy = "binary_heap";
  return execute_plan(plan_run(scenarios, o), scenarios, runner, {"run", false, {}});
}

// A finding whose promise the subject does not make is marked "(not promised)"
// and a judged finding's sentence is shown before it; a promised one is unmarked.
TEST(ReportTest, TableMarksFindingsNotPromised) {
  CaseResult r;
  r.verdict = Verdict::kFail;
  r.violations["early_fire"] = {4, "timer 3 fired 20us early"};
  r.violations["lost_timer"] = {1, "timer 9 was lost"};
  r.promises = PromiseSet(Promise::kDelivery);
  Report report = alpha_run(r);
  std::string plain = format_table(report, false);
  EXPECT_NE(plain.find("early_fire=4 (not promised) lost_timer=1: timer 9 was lost"),
            std::string::npos)
      << plain;
  report.cases.front().result.promises = PromiseSet(Promise::kDelivery) | Promise::kNeverEarly;
  plain = format_table(report, false);
  EXPECT_NE(plain.find("early_fire=4 lost_timer=1: timer 3 fired 20us early"), std::string::npos)
      << plain;
}

// A timeout's detail leads with the runner's reason, not with a finding's example
// that the case happened to see before it hung.
TEST(ReportTest, ATimeoutLeadsWithItsCause) {
  CaseResult r;
  r.verdict = Verdict::kTimeout;
  r.violations["early_fire"] = {3, "cookie 7 fired 20us early"};
  r.message = "no answer after 1.0 s to line 1763 `schedule` id 1267\nactor states: ...";
  const std::string plain = format_table(alpha_run(r), false);
  EXPECT_NE(plain.find("timeout  0.01s  no answer after 1.0 s to line 1763 `schedule` id 1267; "
                       "early_fire=3"),
            std::string::npos)
      << plain;
  EXPECT_EQ(plain.find("fired 20us early"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("actor states"), std::string::npos) << plain;
}

// A green summary says what it saw: passed cases' unpromised findings are counted
// per case and totalled per oracle; a judged one fails the case instead.
TEST(ReportTest, SummaryCountsFindingsOfPassedCases) {
  std::vector<Scenario> scenarios{make_scenario("alpha"), make_scenario("beta"),
                                  make_scenario("gamma")};
  test::FakeRunner runner;
  for (const char* id : {"alpha/binary_heap", "beta/binary_heap"}) {
    CaseResult& r = runner.script[id];
    r.verdict = Verdict::kPass;
    r.violations["early_fire"] = {500, "timer 3 fired 20us early"};
    r.promises = PromiseSet(Promise::kDelivery);
  }
  runner.script["beta/binary_heap"].violations["task_exceptions"] = {612,
                                                                     "Timer already cancelled"};
  runner.script["alpha/binary_heap"].counters["refused"] = 100;
  Overrides o;
  o.strategy = "binary_heap";
  const Report report = execute_plan(plan_run(scenarios, o), scenarios, runner, {"run", false, {}});
  const std::string plain = format_table(report, false);
  EXPECT_NE(plain.find("3 cases: 3 passed (2 with findings: early_fire 1000, task_exceptions 612), "
                       "0 failed"),
            std::string::npos)
      << plain;
  EXPECT_NE(plain.find("; 100 schedules refused by the subject in 1 cases"), std::string::npos)
      << plain;
  test::FakeRunner quiet;
  const Report clean = execute_plan(plan_run(scenarios, o), scenarios, quiet, {"run", false, {}});
  EXPECT_NE(format_table(clean, false).find("3 cases: 3 passed, 0 failed"), std::string::npos)
      << format_table(clean, false);
  EXPECT_EQ(format_table(clean, false).find("refused"), std::string::npos);
}

// NO_COLOR set to a non-empty value turns colour off even on a terminal.
TEST(ReportTest, NoColorDisablesColour) {
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(use_color(1));
  ::unsetenv("NO_COLOR");
  // Under ctest stdout is a pipe: no colour either.
  EXPECT_EQ(use_color(1), ::isatty(1) == 1);
}

// Budgets parse with units and reject junk.
TEST(ReportTest, DurationsParseWithUnits) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("5"), 5);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_duration_s("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_duration_s("100us"), 1e-4);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2m"), 120);
  for (const char* bad : {"", "s", "5 s", "5h", "inf", "nan", "0x10", "five"}) {
    EXPECT_FALSE(parse_duration_s(bad)) << bad;
  }
}

// Replay picks the only failing case of a stored report, or the named one, and
// names the ids when the choice is ambiguous or unknown.
TEST(ReportTest, ReplayTargetComesFromTheReport) {
  std::vector<Scenario> scenarios{make_scenario("alpha")};
  test::FakeRunner runner;
  runner.script["alpha/hashed_wheel"].verdict = Verdict::kFail;
  Report report = execute_plan(plan_run(scenarios, {}), scenarios, runner, {"run", false, {}});
  const fs::path dir = temp_dir();
  const fs::path f = dir / "r.json";
  write_file_atomic(f.string(), report.to_json().dump(2));
  InputErrors errors;
  auto t = load_replay_target(f.string(), std::nullopt, errors);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->case_id, "alpha/hashed_wheel");
  EXPECT_EQ(t->strategy, "hashed_wheel");
  EXPECT_EQ(t->seed, 3u);
  EXPECT_EQ(t->recorded_verdict, "fail");
  EXPECT_EQ(t->scenario_document.at("name"), "alpha");
  t = load_replay_target(f.string(), std::string("alpha/binary_heap"), errors);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->recorded_verdict, "pass");
  EXPECT_FALSE(load_replay_target(f.string(), std::string("nope"), errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/cases");
  EXPECT_NE(errors[0].message.find("alpha/binary_heap"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tlab::tool
