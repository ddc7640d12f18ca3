// End-to-end tests of `--shard i/n` and `tlab merge` through the real tlab binary
// on virtual-clock scenarios (their cases replay the same counters and histograms
// every run): a merged report equals the unsharded run's, each system's sharding
// variables split the plan as the flag does, and merge refuses what is not the
// shards of one run (exit 2, naming the file and JSON pointer). `tlab mutants`
// shards (MutantsShardTest, over the deterministic sim layer) merge into the
// unsharded kill matrix.
//
// Fields stripped before comparing reports, because they differ between two runs
// of the same plan (RunsAreDeterministicOutsideTheStrippedFields shows the rest is
// identical):
//   environment             the machine and binary facts (and merged, shard)
//   cases[].duration_s      wall time of the case
//   cases[].peak_rss_bytes  the case child's resident set
// and for `check`'s mutant cases also (CheckMutantCasesVaryOnlyInDetectionTime):
//   counters.detect_us      wall time to the first violation
//   violations.*.first_example  its sentence prints times read off the real clock
//                           around the virtual one ("t=99.9us" vs "t=100.0us")
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/shard.h"
#include "support/cli_run.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Vars = std::vector<std::pair<std::string, std::string>>;

std::vector<std::string> scenario_files() {
  const std::string dir = std::string(TLAB_SOURCE_DIR) + "/scenarios/";
  return {dir + "facility_ties.json", dir + "fixed_rate_drift.json",
          dir + "huge_and_negative_delays.json"};
}

Json strip(Json report, bool mutant_timing) {
  report.erase("environment");
  report.erase("merged");
  report.erase("shard");
  for (Json& c : report["cases"]) {
    c.erase("duration_s");
    c.erase("peak_rss_bytes");
    if (mutant_timing && c["expect_fail"].get<bool>()) {
      c["counters"].erase("detect_us");
      for (auto& [name, v] : c["violations"].items()) v.erase("first_example");
    }
  }
  return report;
}

// System: one distribution engine's sharding variables for worker i of 3 (0-based).
struct System {
  std::string name;
  std::function<Vars(int)> vars;
};

// sharding_systems: every row of kShardVariables, set as its system sets them for 3
// workers (Bazel also names its status file `status`).
std::vector<System> sharding_systems(const std::string& status) {
  return {
      {"TEST_SHARD_INDEX",
       [status](int i) {
         return Vars{{"TEST_SHARD_INDEX", std::to_string(i)},
                     {"TEST_TOTAL_SHARDS", "3"},
                     {"TEST_SHARD_STATUS_FILE", status}};
       }},
      {"GTEST_SHARD_INDEX",
       [](int i) {
         return Vars{{"GTEST_SHARD_INDEX", std::to_string(i)}, {"GTEST_TOTAL_SHARDS", "3"}};
       }},
      {"JOB_COMPLETION_INDEX",
       [](int i) {
         return Vars{{"JOB_COMPLETION_INDEX", std::to_string(i)}, {"TLAB_TOTAL_SHARDS", "3"}};
       }},
      {"CI_NODE_INDEX",
       [](int i) {
         return Vars{{"CI_NODE_INDEX", std::to_string(i + 1)}, {"CI_NODE_TOTAL", "3"}};
       }},
      // sbatch --array=1-3
      {"SLURM_ARRAY_TASK_ID",
       [](int i) {
         return Vars{{"SLURM_ARRAY_TASK_ID", std::to_string(i + 1)},
                     {"SLURM_ARRAY_TASK_COUNT", "3"},
                     {"SLURM_ARRAY_TASK_MIN", "1"},
                     {"SLURM_ARRAY_TASK_MAX", "3"},
                     {"SLURM_ARRAY_TASK_STEP", "1"},
                     {"SLURM_ARRAY_JOB_ID", "4242"}};
       }},
  };
}

class ShardMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tlab_shard_merge_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "scratch");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // tlab with every sharding variable of the test's own environment removed (a
  // CI runner may set them) and `vars` set.
  testing::CliResult tlab(const std::vector<std::string>& args, const Vars& vars = {}) {
    std::vector<std::string> all;
    for (const ShardVariables& row : kShardVariables) {
      for (std::string_view v : {row.index_var, row.total_var, row.min_var, row.step_var}) {
        if (!v.empty()) all.insert(all.end(), {"-u", std::string(v)});
      }
    }
    all.insert(all.end(), {"-u", "TEST_SHARD_STATUS_FILE"});
    for (const auto& [k, v] : vars) all.push_back(k + "=" + v);
    all.push_back(TLAB_BIN);
    all.insert(all.end(), args.begin(), args.end());
    return testing::run_tlab("env", all, dir_ / "scratch");
  }

  // `tlab <command> <scenarios> <extra> --report <report>`, which must exit 0.
  void run_plan(const std::string& command, const std::string& report,
                const std::vector<std::string>& extra = {}, const Vars& vars = {}) {
    std::vector<std::string> args{command};
    for (const auto& f : scenario_files()) args.push_back(f);
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--report", path(report)});
    const auto r = tlab(args, vars);
    ASSERT_EQ(r.code, 0) << r.err;
  }

  Json load(const std::string& name) const { return Json::parse(testing::slurp(dir_ / name)); }

  // Runs shards 0..n-1 of `command` with --shard and merges them into merged.json.
  std::vector<std::string> run_shards(const std::string& command, std::uint32_t n) {
    std::vector<std::string> merge_args{"merge"};
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string name = command + "-shard" + std::to_string(i) + ".json";
      run_plan(command, name, {"--shard", std::to_string(i) + "/" + std::to_string(n)});
      merge_args.push_back(path(name));
    }
    return merge_args;
  }

  fs::path dir_;
};

// Two unsharded runs of the virtual-clock scenarios agree in everything but the
// stripped fields, so the identity tests below compare what is deterministic.
TEST_F(ShardMergeTest, RunsAreDeterministicOutsideTheStrippedFields) {
  run_plan("run", "a.json");
  run_plan("run", "b.json");
  EXPECT_EQ(strip(load("a.json"), false), strip(load("b.json"), false));
  EXPECT_EQ(load("a.json")["cases"].size(), 15u);
}

// For n = 1, 3 and 7 the merged report of `tlab run --shard i/n` equals the
// unsharded run's: case order, verdicts, counters, histograms, summary, exit code.
TEST_F(ShardMergeTest, MergedRunEqualsUnshardedForOneThreeAndSevenShards) {
  run_plan("run", "whole.json");
  const Json whole = strip(load("whole.json"), false);
  for (std::uint32_t n : {1u, 3u, 7u}) {
    auto args = run_shards("run", n);
    args.insert(args.end(), {"--report", path("merged.json"), "--junit", path("merged.xml")});
    const auto r = tlab(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const Json merged = load("merged.json");
    EXPECT_EQ(merged["merged"]["shards"], n);
    EXPECT_EQ(merged["merged"]["plan_cases"], 15);
    EXPECT_EQ(strip(merged, false), whole) << "n=" << n;
  }
}

// `check` pairs stop at the first strategy that catches the mutant; sharding by
// pair keeps that, so the merged check equals the unsharded one (mutant timing
// stripped, see the file comment).
TEST_F(ShardMergeTest, MergedCheckEqualsUnshardedCheck) {
  run_plan("check", "whole.json");
  auto args = run_shards("check", 3);
  args.insert(args.end(), {"--report", path("merged.json")});
  const auto r = tlab(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(strip(load("merged.json"), true), strip(load("whole.json"), true));
  EXPECT_EQ(load("merged.json")["summary"]["mutants_caught"].size(), 4u);
}

// check --subject: the property layer is one more case of the plan, run by one
// shard only, so for n = 1 and 3 the merge equals the unsharded run, property case
// included. A subject's *_cost histograms time its calls on the real clock, so
// they are stripped as durations are.
TEST_F(ShardMergeTest, MergedSubjectCheckIncludesThePropertyCaseOnce) {
  // The virtual-clock scenarios a queue subject plays (it has no periodic timers).
  const auto check = [&](const std::string& report, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"check",     scenario_files()[0], scenario_files()[2],
                                  "--subject", "binary_heap",       "--property-tests",
                                  "500",       "--report",          path(report)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = tlab(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return load(report);
  };
  const auto strip_costs = [](Json report) {
    report = strip(std::move(report), false);
    for (Json& c : report["cases"]) {
      for (auto it = c["latency"].begin(); it != c["latency"].end();) {
        it = it.key().ends_with("_cost") ? c["latency"].erase(it) : std::next(it);
      }
    }
    return report;
  };
  const Json whole = strip_costs(check("whole.json", {}));
  ASSERT_EQ(whole["cases"].size(), 3u) << whole.dump(2);
  ASSERT_EQ(whole["cases"].back()["scenario"], "properties") << whole.dump(2);
  for (std::uint32_t n : {1u, 3u}) {
    std::vector<std::string> args{"merge"};
    std::size_t properties = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string name = fmt::format("subject-shard{}.json", i);
      const Json shard = check(name, {"--shard", fmt::format("{}/{}", i, n)});
      for (const Json& c : shard["cases"]) properties += c["scenario"] == "properties";
      args.push_back(path(name));
    }
    EXPECT_EQ(properties, 1u) << "n=" << n;
    args.insert(args.end(), {"--report", path("merged.json")});
    const auto r = tlab(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(strip_costs(load("merged.json")), whole) << "n=" << n;
  }
}

// Each system's variables, set as that system sets them for 3 workers, give the
// same shards as --shard: the merge equals the unsharded run, and tlab says which
// variables it read.
TEST_F(ShardMergeTest, EachSystemsVariablesShardLikeTheFlag) {
  run_plan("run", "whole.json");
  const Json whole = strip(load("whole.json"), false);
  const std::string status = path("bazel_status");
  const std::vector<System> systems = sharding_systems(status);
  for (const System& sys : systems) {
    std::vector<std::string> merge{"merge"};
    for (int i = 0; i < 3; ++i) {
      const std::string name = sys.name + std::to_string(i) + ".json";
      std::vector<std::string> args{"run"};
      for (const auto& f : scenario_files()) args.push_back(f);
      args.insert(args.end(), {"--report", path(name)});
      const auto r = tlab(args, sys.vars(i));
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_NE(r.err.find("shard " + std::to_string(i) + " of 3 (0-based), from " + sys.name),
                std::string::npos)
          << r.err;
      merge.push_back(path(name));
    }
    merge.insert(merge.end(), {"--report", path("merged.json")});
    const auto r = tlab(merge);
    ASSERT_EQ(r.code, 0) << sys.name << ": " << r.err;
    EXPECT_EQ(strip(load("merged.json"), false), whole) << sys.name;
  }
  EXPECT_TRUE(fs::exists(status));
}

// A bad flag or variable is exit 2 naming it, before anything runs.
TEST_F(ShardMergeTest, BadShardFlagOrVariableIsBadInput) {
  auto r = tlab({"run", scenario_files()[0], "--shard", "3/3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
  r = tlab({"run", scenario_files()[0]}, {{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "3"}});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("CI_NODE_INDEX: /: 0 does not name one of 3 shards"), std::string::npos)
      << r.err;
  r = tlab({"run", scenario_files()[0]}, {{"JOB_COMPLETION_INDEX", "1"}});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("TLAB_TOTAL_SHARDS"), std::string::npos) << r.err;
  // The other layers of check --models are not sharded: refused, not run in every shard.
  r = tlab({"check", "--models"}, {{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--models is not sharded"), std::string::npos) << r.err;
}

// merge refuses files that are not the shards of one run, naming the file and the
// JSON pointer, and names the missing shards; nothing is written then.
TEST_F(ShardMergeTest, MergeRefusesWhatIsNotOneRunsShards) {
  for (int i = 0; i < 3; ++i) {
    run_plan("run", "s" + std::to_string(i) + ".json", {"--shard", std::to_string(i) + "/3"});
  }
  run_plan("run", "whole.json");
  run_plan("run", "two1.json", {"--shard", "1/2"});
  run_plan("check", "check1.json", {"--shard", "1/3"});
  {  // one scenario fewer: a different scenario set and plan
    std::vector<std::string> args{"run", scenario_files()[0], scenario_files()[1], "--shard",
                                  "1/3", "--report",          path("fewer1.json")};
    ASSERT_EQ(tlab(args).code, 0);
  }
  run_plan("run", "seed1.json", {"--shard", "1/3", "--seed", "5"});
  Json other_version = load("s1.json");
  other_version["environment"]["tlab_version"] = "0.0.0-other";
  std::ofstream(path("version1.json")) << other_version.dump();
  Json interrupted = load("s1.json");
  interrupted["interrupted"] = true;
  std::ofstream(path("interrupted1.json")) << interrupted.dump();
  Json killed = load("s1.json");  // what a shard killed mid-run leaves on disk
  killed["complete"] = false;
  std::ofstream(path("killed1.json")) << killed.dump();
  Json rounds = load("s1.json");
  rounds["until_fail"] = {{"round", 1}, {"rounds", 2}, {"vary_seed", false}};
  std::ofstream(path("rounds1.json")) << rounds.dump();

  const std::string s0 = path("s0.json"), s2 = path("s2.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals{
      {{s0, path("s1.json"), s2, s0}, "s0.json: /shard/index: shard 0 of 3 is also in"},
      {{s0, s2}, "tlab merge: missing shard 1 of 3 (given: 0, 2); nothing was written"},
      {{s0, path("two1.json"), s2}, "two1.json: /shard/total: the shard total is '2', but '3'"},
      {{s0, path("check1.json"), s2}, "check1.json: /command: the command is 'check', but 'run'"},
      {{s0, path("fewer1.json"), s2},
       "fewer1.json: /shard/scenario_digest: the scenario set's digest"},
      {{s0, path("seed1.json"), s2}, "seed1.json: /shard/plan_digest: the plan's digest"},
      {{s0, path("version1.json"), s2},
       "version1.json: /environment/tlab_version: the tlab version is '0.0.0-other'"},
      {{s0, path("interrupted1.json"), s2},
       "interrupted1.json: /interrupted: shard 1 was interrupted"},
      {{s0, path("killed1.json"), s2}, "killed1.json: /complete: shard 1 did not finish"},
      {{s0, path("rounds1.json"), s2}, "rounds1.json: /until_fail: a --until-fail report"},
      {{path("whole.json")}, "whole.json: /shard: not a shard report"},
      {{s0, path("nonexistent.json")}, "nonexistent.json"},
  };
  for (const auto& [files, message] : refusals) {
    std::vector<std::string> args{"merge"};
    args.insert(args.end(), files.begin(), files.end());
    args.insert(args.end(), {"--report", path("merged.json")});
    fs::remove(path("merged.json"));
    const auto r = tlab(args);
    EXPECT_EQ(r.code, 2) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("merged.json"))) << message;
  }
}

// `tlab mutants` over the sim layer, small enough for ctest (2 seeded schedules
// per trial): deterministic, so the unsharded and the merged matrix compare exactly
// once times are stripped (strip_matrix).
const std::vector<std::string> kMutantsArgs{"mutants", "--layers",        "sim", "--sim-trials",
                                            "1",       "--sim-schedules", "2"};

// strip_matrix: a report's kill matrix without the wall times (layers' seconds and
// the detection times), which differ between any two runs, and without which check
// a layer's best is and its detail: among checks of equal rate the fastest is best,
// so that choice follows the times too (every check is still compared, in "checks").
Json strip_matrix(const Json& report) {
  Json m = report.at("kill_matrix");
  for (Json& l : m["layers"]) l.erase("seconds");
  for (Json& c : m["checks"]) c.erase("detect_s");
  for (Json& row : m["mutants"]) {
    for (const char* list : {"caught_by", "flaky"}) {
      for (Json& c : row[list]) {
        for (const char* timed :
             {"time_to_detection_s", "max_time_to_detection_s", "check", "detail"}) {
          c.erase(timed);
        }
      }
    }
  }
  return m;
}

class MutantsShardTest : public ShardMergeTest {
 protected:
  // `tlab mutants` (kMutantsArgs) with `extra`, writing `report`; its exit code.
  int mutants(const std::string& report, const std::vector<std::string>& extra = {},
              const Vars& vars = {}) {
    std::vector<std::string> args = kMutantsArgs;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--report", path(report)});
    const auto r = tlab(args, vars);
    EXPECT_NE(r.code, 2) << r.err;
    return r.code;
  }
};

// For n = 1 and 3 the merged kill matrix equals the unsharded one (cells, counts,
// records and gate), merge exits as the unsharded run did, each shard exits 0,
// and the merged report goes through --html and --junit like any other.
TEST_F(MutantsShardTest, MergedMatrixEqualsUnshardedForOneAndThreeShards) {
  const int whole_code = mutants("whole.json");
  const Json whole = load("whole.json");
  EXPECT_EQ(whole["kill_matrix"]["summary"]["exit_code"], whole_code);
  ASSERT_GT(whole["kill_matrix"]["checks"].size(), 3u);
  for (std::uint32_t n : {1u, 3u}) {
    std::vector<std::string> merge{"merge"};
    std::size_t checks = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string name = fmt::format("m{}of{}.json", i, n);
      EXPECT_EQ(mutants(name, {"--shard", fmt::format("{}/{}", i, n)}), 0);
      checks += load(name)["kill_matrix"]["checks"].size();
      merge.push_back(path(name));
    }
    EXPECT_EQ(checks, whole["kill_matrix"]["checks"].size()) << "n=" << n;
    merge.insert(merge.end(), {"--report", path("merged.json"), "--html", path("merged.html"),
                               "--junit", path("merged.xml")});
    const auto r = tlab(merge);
    EXPECT_EQ(r.code, whole_code) << r.err;
    const Json merged = load("merged.json");
    EXPECT_EQ(strip_matrix(merged), strip_matrix(whole)) << "n=" << n;
    EXPECT_EQ(merged["summary"]["exit_code"], whole_code);
    EXPECT_NE(testing::slurp(dir_ / "merged.html").find("kill-matrix"), std::string::npos);
    EXPECT_TRUE(fs::exists(path("merged.xml")));
  }
}

// GitLab's and Slurm's variables split the matrix as --shard does: the merge
// equals the unsharded matrix.
TEST_F(MutantsShardTest, SystemsVariablesShardTheMatrix) {
  mutants("whole.json");
  const Json whole = strip_matrix(load("whole.json"));
  for (const System& sys : sharding_systems(path("bazel_status"))) {
    if (sys.name != "CI_NODE_INDEX" && sys.name != "SLURM_ARRAY_TASK_ID") continue;
    std::vector<std::string> merge{"merge"};
    for (int i = 0; i < 3; ++i) {
      const std::string name = sys.name + std::to_string(i) + ".json";
      EXPECT_EQ(mutants(name, {}, sys.vars(i)), 0);
      EXPECT_EQ(load(name)["shard"]["source"].get<std::string>().find(sys.name), 0u);
      merge.push_back(path(name));
    }
    merge.insert(merge.end(), {"--report", path("merged.json")});
    const auto r = tlab(merge);
    EXPECT_NE(r.code, 2) << sys.name << ": " << r.err;
    EXPECT_EQ(strip_matrix(load("merged.json")), whole) << sys.name;
  }
}

// merge refuses a missing shard, a run report among mutants shards, a record in two
// shards, an unknown mutant's record and a shard without its matrix (exit 2, file
// and pointer); a shard with a record dropped by hand
// merges into a matrix that differs from the unsharded one, so the comparison
// above can fail.
TEST_F(MutantsShardTest, MergeRefusesAndTheComparisonCanFail) {
  mutants("whole.json");
  for (int i = 0; i < 3; ++i) {
    mutants("m" + std::to_string(i) + ".json", {"--shard", std::to_string(i) + "/3"});
  }
  run_plan("run", "run1.json", {"--shard", "1/3"});
  // Shard 0's records, each with a unit from shard 1 added (the shards overlap).
  Json overlap = load("m1.json");
  const Json extra = load("m0.json")["kill_matrix"]["checks"];
  ASSERT_FALSE(extra.empty());
  overlap["kill_matrix"]["checks"].push_back(extra.front());
  std::ofstream(path("overlap1.json")) << overlap.dump();
  Json dropped = load("m1.json");
  ASSERT_FALSE(dropped["kill_matrix"]["checks"].empty());
  dropped["kill_matrix"]["checks"].erase(0);
  std::ofstream(path("dropped1.json")) << dropped.dump();
  Json renamed = load("m1.json");  // a record of a mutant this tlab does not have
  renamed["kill_matrix"]["checks"][0]["mutant"] = "no_such_mutant";
  std::ofstream(path("renamed1.json")) << renamed.dump();
  Json bare = load("m1.json");
  bare.erase("kill_matrix");
  std::ofstream(path("bare1.json")) << bare.dump();

  const std::string m0 = path("m0.json"), m2 = path("m2.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals{
      {{m0, m2}, "tlab merge: missing shard 1 of 3 (given: 0, 2)"},
      {{m0, path("run1.json"), m2}, "run1.json: /command: the command is 'run', but 'mutants'"},
      {{m0, path("overlap1.json"), m2}, "overlap1.json: /kill_matrix/checks: "},
      {{m0, path("renamed1.json"), m2},
       "renamed1.json: /kill_matrix/checks/0: not a kill matrix tlab wrote: unknown mutant"},
      {{m0, path("bare1.json"), m2}, "bare1.json: /kill_matrix: a mutants shard report without"},
  };
  for (const auto& [files, message] : refusals) {
    std::vector<std::string> args{"merge"};
    args.insert(args.end(), files.begin(), files.end());
    const auto r = tlab(args);
    EXPECT_EQ(r.code, 2) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  const auto r = tlab({"merge", m0, path("dropped1.json"), m2, "--report", path("merged.json")});
  EXPECT_NE(r.code, 2) << r.err;
  EXPECT_NE(strip_matrix(load("merged.json")), strip_matrix(load("whole.json")));
}

}  // namespace
}  // namespace tlab::tool
