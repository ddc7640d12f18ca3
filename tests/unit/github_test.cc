// Tests for tool/report/github.h: workflow-command escaping, one annotation per
// finding, the step summary and its 1 MiB cap, and emit_github under the variables
// GitHub Actions sets.
#include "report/github.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/ci_report.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;
using testing::ci_report;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Data escapes % CR LF; a property also : and ,.
TEST(GithubTest, EscapesFollowTheWorkflowCommandRules) {
  EXPECT_EQ(github_escape_data("50% a:b,c\r\nz"), "50%25 a:b,c%0D%0Az");
  EXPECT_EQ(github_escape_property("50% a:b,c\r\nz"), "50%25 a%3Ab%2Cc%0D%0Az");
}

// One ::error line per finding, naming the scenario file and line, with no raw
// line break inside a command.
TEST(GithubTest, OneAnnotationPerFinding) {
  const Report r = ci_report();
  const std::string a = github_annotations(findings(r, "r.json"));
  EXPECT_EQ(count_of(a, "\n"), 3u);
  EXPECT_EQ(count_of(a, "::error file=scenarios/racing_cancellers.json,line="), 3u);
  EXPECT_NE(a.find("title=tlab double_resume%3A racing_cancellers/binary_heap::double_resume=2"),
            std::string::npos);
  EXPECT_NE(a.find("50%25 a:b,c"), std::string::npos);  // data: only % CR LF escaped
  EXPECT_NE(a.find("%0Areplay: tlab replay r.json --case"), std::string::npos);
}

// Past the cap the ::error lines stop and one ::warning counts the findings left
// out; at the cap exactly there is no such line.
TEST(GithubTest, AnnotationsAreCapped) {
  const Report r = ci_report();
  const std::vector<Finding> found = findings(r, "r.json");
  ASSERT_EQ(found.size(), 3u);
  const std::string capped = github_annotations(found, 2);
  EXPECT_EQ(count_of(capped, "::error "), 2u);
  EXPECT_EQ(count_of(capped, "::warning "), 1u);
  EXPECT_NE(capped.find("1 more failing cases::2 of 3 failing cases"), std::string::npos);
  const std::string exact = github_annotations(found, 3);
  EXPECT_EQ(count_of(exact, "::error "), 3u);
  EXPECT_EQ(count_of(exact, "::warning"), 0u);
  // The default cap is GitHub's 50 per job, well above the 10 a step shows.
  std::vector<Finding> many;
  for (std::size_t i = 0; i < 120; ++i) many.push_back(found[i % found.size()]);
  const std::string a = github_annotations(many);
  EXPECT_EQ(count_of(a, "::error "), kAnnotationCap);
  EXPECT_NE(a.find("70 more failing cases"), std::string::npos);
}

// An unpromised finding is a ::notice (never an ::error) on its scenario file, and
// a row of its own table in the step summary, under the failing cases; notices are
// capped like annotations, and a truncated summary counts both kinds left out.
TEST(GithubTest, UnpromisedFindingsAreNotices) {
  const Report r = testing::with_unpromised(ci_report());
  const std::vector<Finding> notes = unpromised_findings(r, "r.json");
  ASSERT_EQ(notes.size(), 1u);
  const std::string n = github_notices(notes);
  EXPECT_EQ(count_of(n, "::notice file=scenarios/racing_cancellers.json,line="), 1u);
  EXPECT_EQ(count_of(n, "::error"), 0u);
  EXPECT_NE(
      n.find("title=tlab early_fire (not promised)%3A racing_cancellers/libuv::early_fire 70"),
      std::string::npos);
  const std::vector<Finding> many(12, notes[0]);
  const std::string capped = github_notices(many, 10);
  EXPECT_EQ(count_of(capped, "::notice "), 11u);
  EXPECT_NE(capped.find("10 of 12 unpromised findings"), std::string::npos);

  const std::string summary = step_summary(r, findings(r, ""), kStepSummaryCap, notes);
  const auto failing = summary.find("| racing_cancellers/binary_heap |");
  const auto table = summary.find("1 findings in passed cases that their subject does not");
  ASSERT_NE(failing, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(failing, table);
  EXPECT_NE(summary.find("| racing_cancellers/libuv | early_fire | 70 |"), std::string::npos);
  EXPECT_EQ(summary.find("<script>"), std::string::npos);
  const std::string tight = step_summary(r, findings(r, ""), 1200, many);
  EXPECT_LE(tight.size(), 1200u);
  EXPECT_NE(tight.find("more unpromised findings are in the JSON report"), std::string::npos);

  const fs::path file =
      fs::temp_directory_path() / ("tlab_github_notes_" + std::to_string(::getpid()) + ".md");
  ::setenv("GITHUB_ACTIONS", "true", 1);
  ::setenv("GITHUB_STEP_SUMMARY", file.c_str(), 1);
  std::ostringstream err;
  emit_github(r, findings(r, ""), notes, err);
  EXPECT_EQ(count_of(err.str(), "::error "), 3u);
  EXPECT_EQ(count_of(err.str(), "::notice "), 1u);
  ::unsetenv("GITHUB_ACTIONS");
  ::unsetenv("GITHUB_STEP_SUMMARY");
  fs::remove(file);
}

// Under the cap every finding is a row; over it the rows stop, a truncation line
// says how many are left, and the whole stays within the cap.
TEST(GithubTest, StepSummaryIsCapped) {
  Report r = ci_report();
  const std::string full = step_summary(r, findings(r, ""), kStepSummaryCap);
  EXPECT_EQ(count_of(full, "| racing_cancellers/"), 3u);
  EXPECT_EQ(full.find("<script>"), std::string::npos);
  // 20000 failing cases with 200-byte explanations: about 5 MB of rows.
  const CaseRecord bad = r.cases.front();
  r.cases.clear();
  for (int i = 0; i < 20000; ++i) {
    CaseRecord c = bad;
    c.id = "case" + std::to_string(i);
    c.result.violations["double_resume"].first_example = std::string(200, 'x');
    r.cases.push_back(c);
  }
  const std::string capped = step_summary(r, findings(r, ""), kStepSummaryCap);
  EXPECT_LE(capped.size(), kStepSummaryCap);
  EXPECT_GT(capped.size(), kStepSummaryCap / 2);
  EXPECT_NE(capped.find("**Truncated**"), std::string::npos);
  EXPECT_LT(kStepSummaryCap, std::size_t{1} << 20);
}

// With GITHUB_ACTIONS=true emit_github annotates and appends to the summary file,
// counting what the file already holds against the cap; unset, it does nothing.
TEST(GithubTest, EmitUnderGithubActions) {
  const fs::path file =
      fs::temp_directory_path() / ("tlab_github_test_" + std::to_string(::getpid()) + ".md");
  std::ofstream(file) << "previous step\n";
  const Report r = ci_report();
  const auto found = findings(r, "");
  ::unsetenv("GITHUB_ACTIONS");
  ::setenv("GITHUB_STEP_SUMMARY", file.c_str(), 1);
  std::ostringstream quiet;
  emit_github(r, found, {}, quiet);
  EXPECT_EQ(quiet.str(), "");
  ::setenv("GITHUB_ACTIONS", "true", 1);
  std::ostringstream err;
  emit_github(r, found, {}, err);
  EXPECT_EQ(count_of(err.str(), "::error "), 3u);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("previous step\n## tlab check: 4 cases"), 0u);
  // A file already at the cap gets nothing more.
  fs::resize_file(file, kStepSummaryCap);
  emit_github(r, found, {}, err);
  EXPECT_EQ(fs::file_size(file), kStepSummaryCap);
  ::unsetenv("GITHUB_ACTIONS");
  ::unsetenv("GITHUB_STEP_SUMMARY");
  fs::remove(file);
}

}  // namespace
}  // namespace tlab::tool
