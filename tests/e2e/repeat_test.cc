// End-to-end tests of repetition (plan/trials.h): `tlab replay` exit codes and
// --repeat, `tlab run --until-fail [--vary-seed]`, `tlab check --repeat`, through
// the real tlab binary (not simulation). Bounded by operation counts, and no
// assertion rests on luck: every case runs tests/e2e/repeat/small_check.json, whose
// timer service runs on the virtual clock on one thread, so each run is the same
// run; clean it always passes, and the mutant delay_overflow_wraps (a huge delay
// wraps into the past) always fails it. (token_flag_only on aba_wraparound, its
// earlier mutant, fails only when a stalled canceller's old token meets a re-armed
// waiter, which real threads on a loaded machine need not do.)
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/embedded.h"
#include "base/json_input.h"
#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;

using Result = tlab::testing::CliResult;
using tlab::testing::slurp;

const std::string kSmall = std::string(TLAB_SOURCE_DIR) + "/tests/e2e/repeat/small_check.json";
const std::string kMutant = "delay_overflow_wraps";
const std::string kMutantCase = "small_check/binary_heap/delay_overflow_wraps";

fs::path scratch() {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_repeat_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string path(const std::string& name) { return (scratch() / name).string(); }

Result tlab(const std::vector<std::string>& args) {
  return tlab::testing::run_tlab(TLAB_BIN, args, scratch());
}

// valid_report: the file parses and validates against tool/report/report_schema.json.
nlohmann::json valid_report(const std::string& file) {
  static const tlab::tool::SchemaValidator validator(tlab::tool::embedded_report_schema());
  const nlohmann::json j = nlohmann::json::parse(slurp(file));
  tlab::tool::InputErrors errors;
  EXPECT_TRUE(validator.validate(j, file, errors));
  for (const auto& e : errors) ADD_FAILURE() << e.str();
  return j;
}

// A report of the mutant on small_check, binary_heap only: every case fails.
const std::string& mutant_report() {
  static const std::string file = [] {
    const std::string f = path("mutant.json");
    const Result r =
        tlab({"run", "--mutant", kMutant, "--strategy", "binary_heap", kSmall, "--report", f});
    EXPECT_EQ(r.code, 1) << r.err;
    return f;
  }();
  return file;
}

// Replaying a failure that reproduces exits 1, the replayed verdict's code, and says so.
TEST(RepeatTest, ReplayOfReproducedFailureExitsOne) {
  const Result r = tlab({"replay", mutant_report(), "--case", kMutantCase});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("recorded verdict fail, replayed verdict fail (reproduced)"),
            std::string::npos)
      << r.err;
}

// A report whose recorded verdict the replay cannot match (the file says pass, the
// mutant always fails) exits 4 and says NOT reproduced, naming both verdicts.
TEST(RepeatTest, ReplayThatDiffersExitsFourAndSaysNotReproduced) {
  nlohmann::json j = nlohmann::json::parse(slurp(mutant_report()));
  j["cases"][0]["verdict"] = "pass";
  const std::string edited = path("edited.json");
  std::ofstream(edited) << j.dump(2);
  const Result r = tlab({"replay", edited, "--case", kMutantCase});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("NOT reproduced: recorded pass, replayed fail"), std::string::npos) << r.err;
}

// replay --repeat N replays N times: all N reproduce the recorded failure, so it
// exits 1 with "reproduced 3/3", and its report carries the three trial verdicts.
TEST(RepeatTest, ReplayRepeatCountsReproductions) {
  const Result r = tlab({"replay", mutant_report(), "--case", kMutantCase, "--repeat", "3",
                         "--report", path("replay3.json")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("(reproduced 3/3)"), std::string::npos) << r.err;
  const nlohmann::json j = valid_report(path("replay3.json"));
  ASSERT_EQ(j.at("cases").size(), 1u);
  EXPECT_EQ(j["cases"][0].at("trials"), 3);
  EXPECT_EQ(j["cases"][0].at("failures"), 3);
  EXPECT_EQ(j["cases"][0].at("trial_verdicts"), nlohmann::json({"fail", "fail", "fail"}));
}

// run --until-fail 3 on an always-failing mutant stops in round 1 with exit 1, and
// its report says round 1 of 3.
TEST(RepeatTest, UntilFailStopsAtTheFirstFailingRound) {
  const Result r = tlab({"run", "--mutant", kMutant, "--strategy", "binary_heap", kSmall,
                         "--until-fail", "3", "--report", path("uf.json")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("round 1/3 failed"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no failure"), std::string::npos) << r.err;
  const nlohmann::json j = valid_report(path("uf.json"));
  EXPECT_EQ(j.at("until_fail"),
            nlohmann::json({{"round", 1}, {"rounds", 3}, {"vary_seed", false}}));
  EXPECT_EQ(j.at("summary").at("exit_code"), 1);
}

// run --until-fail 3 --vary-seed on a clean scenario runs 3 rounds, exits 0 with
// "3 rounds, no failure", and the JSON is round 3's, run at seed + 2.
TEST(RepeatTest, UntilFailCleanRunsEveryRoundWithVariedSeeds) {
  const Result r = tlab({"run", kSmall, "--until-fail", "3", "--vary-seed", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("3 rounds, no failure"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("round 2/3: no failure"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("until_fail").at("round"), 3);
  EXPECT_EQ(j.at("cases").at(0).at("seed"), 3 + 2);  // the fixture's seed is 3
}

// check --repeat 2: each row carries trials/failures in the JSON (schema-valid), the
// mutant caught 2/2 with a median detect_us, and the table says k/N.
TEST(RepeatTest, CheckRepeatReportsTrialsPerCase) {
  const Result r = tlab({"check", kSmall, "--repeat", "2", "--report", path("ck.json")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("failed 0/2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("detected 2/2, median detect"), std::string::npos) << r.out;
  const nlohmann::json j = valid_report(path("ck.json"));
  ASSERT_EQ(j.at("cases").size(), 2u);
  const nlohmann::json& plain = j["cases"][0];
  const nlohmann::json& mutant = j["cases"][1];
  EXPECT_EQ(plain.at("trials"), 2);
  EXPECT_EQ(plain.at("failures"), 0);
  EXPECT_FALSE(plain.contains("median_detect_us"));
  EXPECT_EQ(mutant.at("mutant"), kMutant);
  EXPECT_EQ(mutant.at("trials"), 2);
  EXPECT_EQ(mutant.at("failures"), 2);
  EXPECT_TRUE(mutant.at("median_detect_us").is_number_unsigned());
}

// N = 0 and N above 10000 are bad input: exit 2 naming the flag, nothing run; so
// is --vary-seed without --until-fail (no flag is parsed and ignored).
TEST(RepeatTest, BadCountsExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", kSmall, "--repeat", "0"}, "--repeat"},
      {{"check", kSmall, "--repeat", "10001"}, "--repeat"},
      {{"run", kSmall, "--until-fail", "0"}, "--until-fail"},
      {{"run", kSmall, "--until-fail", "10001"}, "--until-fail"},
      {{"run", kSmall, "--vary-seed"}, "--vary-seed"},
      {{"replay", "x.json", "--repeat", "0"}, "--repeat"},
      {{"replay", "x.json", "--repeat", "99999"}, "--repeat"},
  };
  for (const auto& [args, flag] : cases) {
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
