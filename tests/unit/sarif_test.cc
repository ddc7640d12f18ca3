// Tests for tool/report/findings.h and sarif.h: which cases are findings, their rule,
// file and line, and a SARIF log that the shipped OASIS schema accepts (valijson).
#include "report/sarif.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json_input.h"
#include "support/ci_report.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;
using testing::ci_report;

const SchemaValidator& sarif_schema() {
  static const SchemaValidator validator([] {
    std::ifstream in(std::string(TLAB_SOURCE_DIR) + "/tool/report/sarif-schema-2.1.0.json");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  return validator;
}

bool valid(const nlohmann::ordered_json& doc, InputErrors& errors) {
  return sarif_schema().validate(nlohmann::json::parse(doc.dump()), "out.sarif", errors);
}

// The violation, the timeout and the surviving mutant are findings; the pass is not.
TEST(FindingsTest, OneFindingPerFailingCaseWithItsRule) {
  const Report r = ci_report();
  const std::vector<Finding> f = findings(r, "r.json");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].rule, "double_resume");
  EXPECT_EQ(f[1].rule, "timeout");
  EXPECT_EQ(f[2].rule, "mutant_survived");
  EXPECT_EQ(f[0].replay, "tlab replay r.json --case racing_cancellers/binary_heap");
  EXPECT_EQ(findings(r, "")[0].replay,
            "tlab replay REPORT.json --case racing_cancellers/binary_heap");
}

// A passed case's finding that its subject does not promise is no failing finding,
// but an unpromised one (one per oracle with a count), located like a failing one;
// the SARIF log carries it as a note, and it still validates.
TEST(FindingsTest, UnpromisedFindingsAreNotesInSarif) {
  const Report r = testing::with_unpromised(ci_report());
  EXPECT_EQ(findings(r, "r.json").size(), 3u);
  const std::vector<Finding> notes = unpromised_findings(r, "r.json");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_FALSE(notes[0].promised);
  EXPECT_EQ(notes[0].rule, "early_fire");
  EXPECT_EQ(notes[0].count, 70u);
  EXPECT_EQ(notes[0].record->id, "racing_cancellers/libuv");
  EXPECT_EQ(notes[0].file, "scenarios/racing_cancellers.json");
  EXPECT_NE(notes[0].message.find("early_fire 70 (not promised by libuv): <script>"),
            std::string::npos);
  EXPECT_EQ(notes[0].replay, "tlab replay r.json --case racing_cancellers/libuv");
  EXPECT_TRUE(unpromised_findings(ci_report(), "").empty());

  const auto doc = sarif_json(r, findings(r, "r.json"), notes);
  InputErrors errors;
  EXPECT_TRUE(valid(doc, errors)) << (errors.empty() ? "" : errors[0].str());
  const auto& results = doc["runs"][0]["results"];
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0]["level"], "error");
  EXPECT_EQ(results[3]["level"], "note");
  EXPECT_EQ(results[3]["ruleId"], "early_fire");
  EXPECT_EQ(results[3]["properties"]["promised"], false);
  EXPECT_EQ(results[3]["properties"]["count"], 70);
  EXPECT_EQ(results[3]["partialFingerprints"]["tlabCase/v1"], "racing_cancellers/libuv#early_fire");
}

// A built-in scenario is located at scenarios/<file>; a mutant case on its
// `catches` entry, any other case on the "expect" key.
TEST(FindingsTest, BuiltinScenarioLocatedInTheSourceTree) {
  const std::vector<Finding> f = findings(ci_report(), "");
  EXPECT_EQ(f[0].file, "scenarios/racing_cancellers.json");
  std::ifstream in(std::string(TLAB_SOURCE_DIR) + "/scenarios/racing_cancellers.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(f[0].line, line_of(text.str(), "\"expect\""));
  EXPECT_EQ(f[2].line, line_of(text.str(), "\"token_flag_only\""));
  EXPECT_GT(f[0].line, 1);
  EXPECT_NE(f[0].line, f[2].line);
}

// A file on disk is named relative to the nearest directory holding .git; outside
// any repository it stays as given.
TEST(FindingsTest, RepoRelativeWalksUpToDotGit) {
  const fs::path root =
      fs::temp_directory_path() / ("tlab_sarif_test_" + std::to_string(::getpid()));
  fs::create_directories(root / "repo" / ".git");
  fs::create_directories(root / "repo" / "a" / "b");
  std::ofstream(root / "repo" / "a" / "b" / "s.json") << "{}";
  EXPECT_EQ(repo_relative((root / "repo" / "a" / "b" / "s.json").string()), "a/b/s.json");
  std::ofstream(root / "loose.json") << "{}";
  const std::string loose = (root / "loose.json").string();
  EXPECT_EQ(repo_relative(loose), loose);
  fs::remove_all(root);
}

// tlab's SARIF log validates against sarif-schema-2.1.0.json, with a result per
// finding carrying its rule, message and location.
TEST(SarifTest, OutputValidatesAgainstTheOasisSchema) {
  const Report r = ci_report();
  const auto doc = sarif_json(r, findings(r, "r.json"));
  InputErrors errors;
  EXPECT_TRUE(valid(doc, errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
  const auto& results = doc["runs"][0]["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["ruleId"], "double_resume");
  EXPECT_EQ(results[0]["message"]["text"].get<std::string>().find("double_resume=2"), 0u);
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "scenarios/racing_cancellers.json");
  const auto& rules = doc["runs"][0]["tool"]["driver"]["rules"];
  EXPECT_EQ(rules[results[0]["ruleIndex"].get<std::size_t>()]["id"], "double_resume");
  EXPECT_EQ(rules[results[2]["ruleIndex"].get<std::size_t>()]["id"], "mutant_survived");
}

// The schema check is not vacuous: a level SARIF does not define, a missing
// version and a result without a message are each rejected.
TEST(SarifTest, BrokenDocumentsAreRejected) {
  const Report r = ci_report();
  const auto good = sarif_json(r, findings(r, ""));
  auto bad_level = good;
  bad_level["runs"][0]["results"][0]["level"] = "fatal";
  auto no_version = good;
  no_version.erase("version");
  auto no_message = good;
  no_message["runs"][0]["results"][1].erase("message");
  for (const auto* doc : {&bad_level, &no_version, &no_message}) {
    InputErrors errors;
    EXPECT_FALSE(valid(*doc, errors));
    EXPECT_FALSE(errors.empty());
  }
}

}  // namespace
}  // namespace tlab::tool
