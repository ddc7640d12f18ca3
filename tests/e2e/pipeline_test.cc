// End-to-end tests of the CLI pipeline with a scripted runner (the real stress
// runner plugs into the same seam): options -> scenario files -> cases -> report
// file, JUnit file, SARIF, HTML and GitHub outputs, table, replay and Ctrl-C. Runs
// run_cli in-process.
#include <expat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/embedded.h"
#include "base/interrupt.h"
#include "base/json_input.h"
#include "cli/cli.h"
#include "support/cli_run.h"
#include "support/fake_runner.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

using CliRun = testing::CliResult;
using testing::slurp;

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tlab_pipeline_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    clear_interrupt();
  }
  void TearDown() override {
    fs::remove_all(dir_);
    clear_interrupt();
  }

  CliRun cli(std::vector<std::string> args) {
    args.insert(args.begin(), "tlab");
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    CliEnv env{&out, &err, test::forward_to(runner_)};
    const int code = run_cli(static_cast<int>(argv.size()), argv.data(), env);
    return {code, out.str(), err.str()};
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string good() { return std::string(TLAB_E2E_DIR) + "/good/racing_minimal.json"; }

  static void expect_valid_report(const std::string& text) {
    InputErrors errors;
    auto doc = parse_json_text(text, "report", errors);
    ASSERT_TRUE(doc);
    static const SchemaValidator validator(embedded_report_schema());
    EXPECT_TRUE(validator.validate(*doc, "report", errors));
    for (const InputError& e : errors) ADD_FAILURE() << e.str();
  }

  fs::path dir_;
  test::FakeRunner runner_;  // the script, shared by every CLI invocation of a test
};

// A passing run exits 0, prints the table, and writes a report that validates and
// JUnit XML that a real XML parser accepts.
TEST_F(PipelineTest, PassingRunWritesValidReportAndJunit) {
  const CliRun r = cli({"run", good(), "--report", path("r.json"), "--junit", path("j.xml")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("racing_minimal"), std::string::npos);
  EXPECT_NE(r.out.find("5 cases: 5 passed"), std::string::npos) << r.out;
  expect_valid_report(slurp(path("r.json")));
  const std::string xml = slurp(path("j.xml"));
  XML_Parser parser = XML_ParserCreate(nullptr);
  int testcases = 0;
  XML_SetUserData(parser, &testcases);
  XML_SetStartElementHandler(parser, [](void* data, const XML_Char* name, const XML_Char**) {
    if (std::string(name) == "testcase") ++*static_cast<int*>(data);
  });
  EXPECT_EQ(XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1), XML_STATUS_OK)
      << XML_ErrorString(XML_GetErrorCode(parser)) << "\n"
      << xml;
  XML_ParserFree(parser);
  EXPECT_EQ(testcases, 5);
}

// A violation exits 1 and names it; JUnit carries it as a parseable failure even
// with XML specials in the example; replay of the report reproduces it from the
// recorded strategy, seed and operations.
TEST_F(PipelineTest, ViolationThenReplayReproduces) {
  runner_.script["racing_minimal/hashed_wheel"].verdict = Verdict::kFail;
  runner_.script["racing_minimal/hashed_wheel"].violations["double_resume"] = {
      1, "waiter#1 resumed twice: by <canceller#0> & by expiry \x01"};
  CliRun r = cli({"run", good(), "--seed", "99", "--operations", "123", "--report", path("r.json"),
                  "--junit", path("j.xml")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("double_resume=1"), std::string::npos) << r.out;
  const std::string xml = slurp(path("j.xml"));
  XML_Parser parser = XML_ParserCreate(nullptr);
  EXPECT_EQ(XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1), XML_STATUS_OK) << xml;
  XML_ParserFree(parser);

  runner_.seen.clear();
  r = cli({"replay", path("r.json"), "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("reproduced"), std::string::npos) << r.err;
  ASSERT_EQ(runner_.seen.size(), 1u);
  EXPECT_EQ(runner_.seen[0].strategy, "hashed_wheel");
  EXPECT_EQ(runner_.seen[0].seed, 99u);
  EXPECT_EQ(runner_.seen[0].operations, 123u);
  expect_valid_report(r.out);
}

// --json prints a schema-valid report on stdout and nothing else.
TEST_F(PipelineTest, JsonOnStdout) {
  const CliRun r = cli({"run", good(), "--strategy", "sorted_list", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  expect_valid_report(r.out);
  EXPECT_EQ(nlohmann::json::parse(r.out).at("cases").size(), 1u);
}

// check: the scenario's listed mutants must be caught (exit 0) and a surviving
// one fails the gate (exit 1). JUnit agrees with the exit code: a caught mutant is
// a passing test case, so a green gate shows CI no failure, and the failures of a
// red gate are exactly the survivor's cases (one per strategy it ran on).
TEST_F(PipelineTest, CheckGatesOnMutants) {
  runner_.fail_if = [](const CaseSpec& s) { return s.mutant.has_value(); };
  CliRun r = cli({"check", good(), "--junit", path("green.xml")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("mutants: 2/2 caught"), std::string::npos) << r.out;
  const std::string green = slurp(path("green.xml"));
  EXPECT_NE(green.find("failures=\"0\""), std::string::npos) << green;
  EXPECT_EQ(green.find("<failure"), std::string::npos) << green;
  runner_.fail_if = [](const CaseSpec& s) { return s.mutant == Mutant::kTokenFlagOnly; };
  r = cli({"check", good(), "--junit", path("red.xml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("SURVIVED: racing_minimal:token_relaxed_resolve"), std::string::npos)
      << r.out;
  const std::string red = slurp(path("red.xml"));
  EXPECT_NE(red.find("failures=\"5\""), std::string::npos) << red;
  std::size_t survivors = 0;
  for (std::size_t at = red.find("<failure "); at != std::string::npos;
       at = red.find("<failure ", at + 1)) {
    EXPECT_NE(red.find("token_relaxed_resolve", at), std::string::npos) << red;
    ++survivors;
  }
  EXPECT_EQ(survivors, 5u) << red;
}

// Ctrl-C mid-run: exit 130 and a report on disk with the finished cases, marked
// interrupted.
TEST_F(PipelineTest, InterruptLeavesPartialReport) {
  runner_.interrupt_after = 2;
  const CliRun r = cli({"run", good(), "--report", path("r.json")});
  EXPECT_EQ(r.code, 130);
  EXPECT_NE(r.err.find("interrupted"), std::string::npos);
  const std::string text = slurp(path("r.json"));
  expect_valid_report(text);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("interrupted"), true);
  EXPECT_EQ(j.at("cases").size(), 2u);
  EXPECT_EQ(j.at("summary").at("not_run"), 3);
}

// compare runs one case per strategy and prints latency percentiles; --html writes
// a page.
TEST_F(PipelineTest, CompareTableAndHtml) {
  const CliRun r = cli(
      {"compare", good(), "--strategies", "binary_heap,hashed_wheel", "--html", path("c.html")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("P99_US"), std::string::npos);
  EXPECT_NE(r.out.find("hashed_wheel"), std::string::npos);
  EXPECT_NE(slurp(path("c.html")).find("<table>"), std::string::npos);
}

// A build without a runner validates input (exit 2 for bad files) and then fails
// clearly with exit 3 "runner not built yet"; it never reports a pass.
TEST_F(PipelineTest, MissingRunnerExitsThree) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", good()}, {"check", good()}, {"compare", good()}}) {
    std::vector<const char*> argv{"tlab"};
    for (const auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    CliEnv env{&out, &err, []() -> std::unique_ptr<Runner> { return nullptr; }};
    EXPECT_EQ(run_cli(static_cast<int>(argv.size()), argv.data(), env), 3) << args[0];
    EXPECT_NE(err.str().find("runner not built yet"), std::string::npos);
    EXPECT_TRUE(out.str().empty());
  }
}

// A failing clean case of the built-in suite: exit 1, a SARIF log the OASIS schema
// accepts with the case's rule and scenarios/<file>, an HTML page with its replay
// anchor, and under GITHUB_ACTIONS an annotation and the step summary.
TEST_F(PipelineTest, FailingCheckWritesEveryOutput) {
  runner_.fail_if = [](const CaseSpec& s) { return s.id == "racing_cancellers/binary_heap"; };
  ::setenv("GITHUB_ACTIONS", "true", 1);
  ::setenv("GITHUB_STEP_SUMMARY", path("summary.md").c_str(), 1);
  struct Unset {
    ~Unset() {
      ::unsetenv("GITHUB_ACTIONS");
      ::unsetenv("GITHUB_STEP_SUMMARY");
    }
  } unset;
  const auto r = cli(
      {"run", "--report", path("r.json"), "--sarif", path("r.sarif"), "--html", path("r.html")});
  EXPECT_EQ(r.code, 1) << r.err;
  InputErrors errors;
  const auto sarif = parse_json_text(slurp(path("r.sarif")), "r.sarif", errors);
  ASSERT_TRUE(sarif);
  static const SchemaValidator schema(
      slurp(std::string(TLAB_E2E_DIR) + "/../../tool/report/sarif-schema-2.1.0.json"));
  EXPECT_TRUE(schema.validate(*sarif, "r.sarif", errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
  const auto& results = (*sarif)["runs"][0]["results"];
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["ruleId"], "double_resume");
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "scenarios/racing_cancellers.json");
  const std::string html = slurp(path("r.html"));
  EXPECT_NE(html.find("id=\"replay-0\""), std::string::npos);
  EXPECT_NE(html.find("tlab replay " + path("r.json") + " --case racing_cancellers/binary_heap"),
            std::string::npos);
  EXPECT_NE(r.err.find("::error file=scenarios/racing_cancellers.json,line="), std::string::npos);
  EXPECT_NE(slurp(path("summary.md")).find("| racing_cancellers/binary_heap | double_resume |"),
            std::string::npos);
}

// --sarif and --html are output paths like --report: an unwritable directory or a
// file another flag names is bad input (exit 2, naming the flag), and nothing runs.
TEST_F(PipelineTest, OutputFlagsAreChecked) {
  auto r = cli({"run", "--sarif", "/nonexistent-dir/r.sarif"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sarif"), std::string::npos) << r.err;
  r = cli({"check", "--report", path("same"), "--html", path("same")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--html: the same file is named by another flag"), std::string::npos)
      << r.err;
  EXPECT_TRUE(runner_.seen.empty());
}

}  // namespace
}  // namespace tlab::tool
