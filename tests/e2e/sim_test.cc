// End-to-end tests of deterministic simulation (`--sim`, runner/sim_run.h) through
// the real tlab binary: every (scenario, strategy, mutant) pair of `tlab check
// --sim random` on the built-in suite gives the same verdict, violations, counters
// and histograms in every run (TLAB_SIM_RUNS runs, default 2; the `slow` entry
// runs 20), a recorded simulated failure replays exactly (exit 1), a tampered
// record does not (exit 4), every engine (the wait group, coroutine loop and
// executor included) runs simulated and replays exactly, and bad --sim input is
// exit 2. No timing: a simulated case is a pure function of its seed.
//
// But its wall time is not: every switch between tasks is a hand-off between two
// threads, which a machine whose cores are busy serves late. The built-in suite
// under --sim took 12 s idle, 4 minutes with one core spinning (a case 14.6 s, near
// its scenario's 20 s budget) and 11 with both (14 of 98 cases past their budgets).
// So every case here runs with the largest budget (600 s: --budget, or the suite's
// files copied with run.budget_s = 600): a watchdog, never what decides the verdict.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/embedded.h"
#include "base/json_input.h"
#include "report/result_diff.h"
#include "support/cli_run.h"
#include "types/case_result.h"

namespace {

namespace fs = std::filesystem;

using Result = tlab::testing::CliResult;
using tlab::testing::slurp;

const std::string kScenarios = std::string(TLAB_SOURCE_DIR) + "/scenarios/";

fs::path scratch() {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_sim_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string path(const std::string& name) { return (scratch() / name).string(); }

Result tlab(const std::vector<std::string>& args) {
  return tlab::testing::run_tlab(TLAB_BIN, args, scratch());
}

nlohmann::json valid_report(const std::string& file) {
  static const tlab::tool::SchemaValidator validator(tlab::tool::embedded_report_schema());
  const nlohmann::json j = nlohmann::json::parse(slurp(file));
  tlab::tool::InputErrors errors;
  EXPECT_TRUE(validator.validate(j, file, errors));
  for (const auto& e : errors) ADD_FAILURE() << e.str();
  return j;
}

int sim_runs() {
  const char* v = std::getenv("TLAB_SIM_RUNS");
  return v != nullptr ? std::atoi(v) : 2;
}

// The largest budget a case may have (the schema's and --budget's maximum).
const std::string kBudget = "600s";

// The built-in suite's scenarios that run under --sim (those it skips named by a
// one-operation run), copied from scenarios/ into the scratch directory with
// run.budget_s = 600; the copies' paths.
std::vector<std::string> sim_suite_with_generous_budgets() {
  const Result probe = tlab({"run", "--sim", "random", "--operations", "1", "--budget", kBudget});
  // 1: a case may fail with one operation (aba_wraparound_narrow needs its at_least).
  EXPECT_TRUE(probe.code == 0 || probe.code == 1) << probe.err;
  std::set<std::string> skipped;
  const std::regex skip("--sim: skipping ([a-z0-9_]+) \\(");
  for (std::sregex_iterator it(probe.err.begin(), probe.err.end(), skip), end; it != end; ++it) {
    skipped.insert((*it)[1]);
  }
  EXPECT_FALSE(skipped.empty()) << probe.err;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kScenarios)) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    if (skipped.count(e.path().stem().string()) != 0) continue;
    nlohmann::json doc = nlohmann::json::parse(slurp(e.path()));
    doc["run"]["budget_s"] = 600;
    const std::string copy = path("suite_" + e.path().filename().string());
    std::ofstream(copy) << doc.dump(2);
    files.push_back(copy);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every case of `tlab check --sim random` over the built-in suite (clean and
// mutant, every strategy) is bit for bit the same in every run: verdict,
// violations with their first examples, counters (the schedule's trace hash among
// them) and exact histograms. And the mutants are caught: the check exits 0.
TEST(SimTest, EveryPairReplaysIdenticallyAcrossRuns) {
  std::map<std::string, tlab::tool::CaseResult> first;
  const std::vector<std::string> suite = sim_suite_with_generous_budgets();
  ASSERT_GT(suite.size(), 10u);
  const int runs = sim_runs();
  for (int run = 0; run < runs; ++run) {
    const std::string file = path("check" + std::to_string(run) + ".json");
    std::vector<std::string> args{"check", "--sim", "random", "--report", file};
    args.insert(args.end(), suite.begin(), suite.end());
    const Result r = tlab(args);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const nlohmann::json j = run == 0 ? valid_report(file) : nlohmann::json::parse(slurp(file));
    ASSERT_GT(j.at("cases").size(), 40u);
    for (const nlohmann::json& c : j.at("cases")) {
      const auto got = tlab::tool::CaseResult::from_json(c);
      const std::string id = c.at("id").get<std::string>();
      // A mutant that corrupts memory may kill the case child (verdict fail,
      // violation crash) before it reports its schedule.
      if (!got.violations.contains("crash")) {
        EXPECT_TRUE(got.counters.contains("sim_trace_hash")) << id;
      }
      auto [it, fresh] = first.try_emplace(id, got);
      if (fresh) continue;
      const auto diff = tlab::tool::first_difference(it->second, got);
      EXPECT_FALSE(diff) << id << " run " << run << ": " << *diff;
    }
  }
}

// A simulated failure (a new earlier head never wakes the timer thread) replays
// exactly: `tlab replay` exits 1 and says so for every one of 3 replays.
TEST(SimTest, RecordedFailureReplaysExactly) {
  const std::string file = path("fail.json");
  const Result r = tlab({"run", kScenarios + "missed_notify.json", "--strategy", "binary_heap",
                         "--mutant", "timer_no_notify_on_earlier", "--sim", "pct",
                         "--pct-depth", "4", "--budget", kBudget, "--report", file});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const nlohmann::json j = valid_report(file);
  EXPECT_EQ(j["cases"][0].at("sim"), nlohmann::json({{"strategy", "pct"}, {"pct_depth", 4}}));
  const Result rp = tlab({"replay", file, "--repeat", "3"});
  EXPECT_EQ(rp.code, 1) << rp.err;
  EXPECT_NE(rp.err.find("reproduced exactly in simulation 3/3"), std::string::npos) << rp.err;
}

// The exactness check can fail: a record whose schedule hash was altered (same
// verdict) is "NOT reproduced exactly", exit 4, naming the counter.
TEST(SimTest, TamperedRecordIsNotReproduced) {
  const std::string file = path("clean.json");
  ASSERT_EQ(tlab({"run", kScenarios + "racing_cancellers.json", "--strategy", "hashed_wheel",
                  "--sim", "random", "--operations", "300", "--budget", kBudget, "--report", file})
                .code,
            0);
  nlohmann::json j = nlohmann::json::parse(slurp(file));
  j["cases"][0]["counters"]["sim_trace_hash"] = 12345;
  const std::string edited = path("edited.json");
  std::ofstream(edited) << j.dump(2);
  const Result r = tlab({"replay", edited, "--case", "racing_cancellers/hashed_wheel"});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("NOT reproduced exactly"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("counter sim_trace_hash: recorded 12345"), std::string::npos) << r.err;
}

// --minimise shrinks a simulated failure to fewer operations and a shorter
// schedule that still fails with a recorded violation, and its report replays
// exactly; a case that is not a simulated failure is exit 2.
TEST(SimTest, MinimiseShrinksToAShortScheduleThatReplays) {
  const std::string file = path("tomin.json");
  ASSERT_EQ(tlab({"run", kScenarios + "racing_cancellers.json", "--strategy", "binary_heap",
                  "--mutant", "token_load_store_resolve", "--sim", "random", "--budget", kBudget,
                  "--report", file})
                .code,
            1);
  const std::string small = path("min.json");
  const Result r = tlab({"replay", file, "--minimise", "--report", small});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("minimised racing_cancellers/binary_heap/token_load_store_resolve"),
            std::string::npos)
      << r.err;
  const nlohmann::json before = nlohmann::json::parse(slurp(file));
  const nlohmann::json after = valid_report(small);
  EXPECT_LT(after["cases"][0].at("operations"), before["cases"][0].at("operations"));
  EXPECT_LT(after["cases"][0]["counters"].at("sim_steps"),
            before["cases"][0]["counters"].at("sim_steps"));
  EXPECT_TRUE(after["cases"][0]["violations"].contains("wrong_result") ||
              after["cases"][0]["violations"].contains("double_resume"))
      << after["cases"][0]["violations"].dump();
  const Result rp = tlab({"replay", small});
  EXPECT_EQ(rp.code, 1) << rp.err;
  EXPECT_NE(rp.err.find("reproduced exactly"), std::string::npos) << rp.err;
  // A failure on real threads that fails every run: the repetition tests' fixture,
  // a timer service on the virtual clock on one thread, under a mutant that wraps a
  // huge delay into the past.
  const std::string real = path("real.json");
  ASSERT_EQ(tlab({"run", std::string(TLAB_SOURCE_DIR) + "/tests/e2e/repeat/small_check.json",
                  "--mutant", "delay_overflow_wraps", "--report", real})
                .code,
            1);
  EXPECT_EQ(tlab({"replay", real, "--minimise"}).code, 2);
}

// Bad --sim input is exit 2 naming the flag or the file: --pct-depth with a random
// walk, --pct-depth without --sim, a named scenario that cannot run in simulation
// (one on a built-in subject: the generic driver is not ported), --sim with
// --subject, and --sim with a mutant simulation cannot reach.
TEST(SimTest, BadSimInputIsExitTwo) {
  Result r = tlab({"run", "--sim", "random", "--pct-depth", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--pct-depth"), std::string::npos) << r.err;
  r = tlab({"run", "--pct-depth", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sim"), std::string::npos) << r.err;
  r = tlab({"run", "--sim", "pct", kScenarios + "sharded_races.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("sharded_races.json: /engine/subject"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--sim cannot run this scenario"), std::string::npos) << r.err;
  r = tlab({"run", "--sim", "pct", "--subject", "libuv"});
  EXPECT_EQ(r.code, 2) << r.err;
  // A mutant in code simulation never runs (TimerService's driver mode) would only
  // "pass": refused, naming the flag.
  r = tlab({"run", "--sim", "random", "--mutant", "timer_run_due_same_pass",
            kScenarios + "callback_chains.json"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--mutant"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("without --sim"), std::string::npos) << r.err;
}

// The built-in suite under --sim skips, by name and reason, the scenarios it cannot
// simulate (only the one on a built-in subject), and runs the rest: every engine,
// the wait group, coroutine loop and executor included.
TEST(SimTest, SuiteSaysWhichScenariosCannotRun) {
  const Result r =
      tlab({"run", "--sim", "random", "--operations", "50", "--budget", kBudget, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--sim: skipping sharded_races (engine.subject sharded_service"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("does not run under simulation"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not ported to SimPlatform yet"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> scenarios;
  for (const nlohmann::json& c : j.at("cases")) {
    EXPECT_TRUE(c.contains("sim")) << c.at("id");
    scenarios.insert(c.at("scenario").get<std::string>());
  }
  for (const char* s : {"wait_group_timeout", "coroutine_timeouts", "worker_churn"}) {
    EXPECT_TRUE(scenarios.contains(s)) << s;
  }
}

// The engines whose drivers were ported last (wait group, coroutine loop, executor)
// run under --sim and replay exactly: a clean case under each strategy kind, and
// a failure under one of the executor's mutants (a stopping worker drops its
// timers), each reproduced bit for bit, schedule hash included.
TEST(SimTest, WaitGroupCoroutineAndExecutorReplayExactly) {
  struct Case {
    std::string scenario, strategy, sim, mutant;
    int code;
  };
  const std::vector<Case> cases{
      {"wait_group_timeout", "hashed_wheel", "random", "", 0},
      {"wait_group_timeout", "binary_heap", "pct", "", 0},
      {"coroutine_timeouts", "sorted_list", "random", "", 0},
      {"worker_churn", "per_worker_wheel", "pct", "", 0},
      {"worker_churn", "per_worker_wheel", "random", "worker_drop_on_shutdown", 1},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string file = path("ported" + std::to_string(n++) + ".json");
    std::vector<std::string> args{"run",   kScenarios + c.scenario + ".json",
                                  "--strategy", c.strategy,
                                  "--sim", c.sim,
                                  "--operations", "300",
                                  "--budget", kBudget,
                                  "--report", file};
    if (!c.mutant.empty()) args.insert(args.end(), {"--mutant", c.mutant});
    const Result r = tlab(args);
    ASSERT_EQ(r.code, c.code) << c.scenario << r.out << r.err;
    const nlohmann::json j = valid_report(file);
    const std::string id = j["cases"][0].at("id").get<std::string>();
    EXPECT_TRUE(j["cases"][0]["counters"].contains("sim_trace_hash")) << id;
    const Result rp = tlab({"replay", file, "--case", id, "--repeat", "2"});
    EXPECT_EQ(rp.code, c.code) << id << rp.err;
    EXPECT_NE(rp.err.find("reproduced exactly in simulation 2/2"), std::string::npos)
        << id << rp.err;
  }
}

}  // namespace
