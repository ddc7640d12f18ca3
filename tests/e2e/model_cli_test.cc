// End-to-end tests of `tlab model` and `tlab mutants` (tool/layers/model_runs.h,
// tool/layers/kill_matrix.h): the real tlab binary drives the real model binaries, the
// real property-test binary, and fake model binaries (shell scripts written by the
// tests) that misbehave on purpose, to show that a surviving mutant, a crashing
// model, a search that runs out of time and bad input each get the right verdict
// and exit code. Every report is validated against tool/report/report_schema.json.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/embedded.h"
#include "base/json_input.h"
#include "support/cli_run.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

using Result = testing::CliResult;
using testing::slurp;

class ModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tlab_model_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result tlab(const std::vector<std::string>& args) {
    return testing::run_tlab(TLAB_BIN, args, dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static Json valid_report(const std::string& text) {
    InputErrors errors;
    auto doc = parse_json_text(text, "report", errors);
    EXPECT_TRUE(doc.has_value()) << text.substr(0, 400);
    if (!doc) return Json{};
    SchemaValidator schema(embedded_report_schema());
    EXPECT_TRUE(schema.validate(*doc, "report", errors)) << (errors.empty() ? "" : errors[0].str());
    return *doc;
  }

  // A fake model binary: `--list` prints `catalogue`; a run prints `run_json` and
  // exits `code` (or does what `body` says instead, when given).
  std::string fake_models(const std::string& catalogue, const std::string& body) {
    const fs::path d = dir_ / "fake_models";
    fs::create_directories(d);
    const fs::path bin = d / "model_fake";
    std::ofstream(bin) << "#!/bin/sh\n"
                       << "if [ \"$1\" = --list ]; then echo '" << catalogue << "'; exit 0; fi\n"
                       << body << "\n";
    ::chmod(bin.c_str(), 0755);
    return d.string();
  }

  fs::path dir_;
};

constexpr const char* kFakeCatalogue =
    R"([{"test":"t","description":"fake","clean":"pass","kills":["token_flag_only"]}])";

// The real token model: clean runs pass, each mutant run and each expected
// wraparound finding is caught; the report validates, names Relacy's failing
// iteration, keeps a history file, and carries a command that reproduces the run.
TEST_F(ModelCli, TokenModelRunsCleanAndMutants) {
  const Result r =
      tlab({"model", "token", "--iterations", "2000", "--models-dir", TLAB_MODELS_DIR,
            "--history-dir", path("hist"), "--report", path("r.json"), "--junit", path("j.xml")});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const Json report = valid_report(slurp(path("r.json")));
  EXPECT_EQ(report["command"], "model");
  std::size_t clean = 0, caught = 0;
  for (const Json& c : report["cases"]) {
    ASSERT_TRUE(c.contains("model"));
    EXPECT_EQ(c["strategy"], "random");
    if (c["expect_fail"].get<bool>()) {
      EXPECT_EQ(c["verdict"], "fail") << c.dump();
      EXPECT_TRUE(c["model"]["failing_iteration"].is_number()) << c.dump();
      ASSERT_TRUE(c["model"]["history"].is_string());
      EXPECT_TRUE(fs::exists(c["model"]["history"].get<std::string>()));
      ++caught;
    } else {
      EXPECT_EQ(c["verdict"], "pass") << c.dump();
      EXPECT_EQ(c["model"]["iterations"], 2000);
      ++clean;
    }
  }
  EXPECT_EQ(clean, 3u);   // racing_resolvers, stale_rearm, stale_token
  EXPECT_EQ(caught, 7u);  // 4 mutant runs + 3 expected wraparound findings
  const std::string junit = slurp(path("j.xml"));
  EXPECT_NE(junit.find("<testsuite"), std::string::npos);
  // A caught mutant is a pass in JUnit: a green gate never shows failures to CI.
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos) << junit;
  EXPECT_EQ(junit.find("<failure"), std::string::npos) << junit;
}

// `tlab model --shard i/3` splits the runs: each (test, mutant or clean) run is in
// exactly one shard, and `tlab merge` of the three equals the unsharded run in ids,
// order, verdicts, failing iterations and the summary. Stripped as run-dependent:
// environment, duration_s, Relacy's cpu_seconds and iterations_per_second (every
// run shares one --history-dir, so the history paths agree).
TEST_F(ModelCli, ShardedModelRunsMergeToTheUnshardedRun) {
  auto strip = [](Json report) {
    for (const char* k : {"environment", "shard", "merged"}) report.erase(k);
    for (Json& c : report["cases"]) {
      c.erase("duration_s");
      for (const char* k : {"cpu_seconds", "iterations_per_second"}) c["model"].erase(k);
    }
    return report;
  };
  auto model = [&](const std::string& report, const std::vector<std::string>& extra) {
    std::vector<std::string> args{"model", "token", "--iterations", "2000", "--models-dir",
                                  TLAB_MODELS_DIR, "--history-dir", path("hist"),
                                  "--report", path(report)};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 0) << r.err;
  };
  model("whole.json", {});
  std::vector<std::string> merge{"merge"};
  std::size_t cases = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "shard" + std::to_string(i) + ".json";
    model(name, {"--shard", std::to_string(i) + "/3"});
    const Json shard = valid_report(slurp(path(name)));
    EXPECT_EQ(shard["shard"]["plan_cases"], 10);
    cases += shard["cases"].size();
    merge.push_back(path(name));
  }
  EXPECT_EQ(cases, 10u);
  merge.insert(merge.end(), {"--report", path("merged.json")});
  const Result r = tlab(merge);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(strip(valid_report(slurp(path("merged.json")))),
            strip(valid_report(slurp(path("whole.json")))));
}

// Without --history-dir, the temporary history directory keeps only unexpected
// failures: on a passing run (clean runs pass, every mutant caught) nothing is left
// in $TMPDIR, and nothing is announced on stderr.
TEST_F(ModelCli, DefaultHistoryDirLeavesNothingBehind) {
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const Result r = tlab({"model", "token", "--iterations", "2000", "--models-dir",
                         TLAB_MODELS_DIR, "--junit", path("j.xml")});
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(tmp)) << fs::begin(fs::directory_iterator(tmp))->path();
  EXPECT_EQ(r.err.find("histories"), std::string::npos) << r.err;
}

// --mutant selects only the runs that must catch it; bound search replaces
// iterations with the context bound.
TEST_F(ModelCli, MutantAndSchedulerSelection) {
  const Result r = tlab({"model", "--mutant", "wait_group_plain_counter", "--scheduler", "bound",
                         "--context-bound", "1", "--models-dir", TLAB_MODELS_DIR, "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const Json report = valid_report(r.out);
  ASSERT_EQ(report["cases"].size(), 3u);  // done_vs_timeout, two_tasks, two_waiters
  for (const Json& c : report["cases"]) {
    EXPECT_EQ(c["mutant"], "wait_group_plain_counter");
    EXPECT_EQ(c["strategy"], "bound:1");
    EXPECT_EQ(c["model"]["context_bound"], 1);
    EXPECT_EQ(c["verdict"], "fail");
  }
}

// A model test that claims a mutant but does not catch it is a SURVIVOR: exit 1.
TEST_F(ModelCli, SurvivingMutantFails) {
  const std::string d = fake_models(
      kFakeCatalogue,
      R"(echo '{"failed":false,"iterations":5,"result":"no error","cpu_seconds":0.1,"iterations_per_second":50}'; exit 0)");
  const Result r = tlab({"model", "--models-dir", d, "--report", path("r.json")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("SURVIVED"), std::string::npos) << r.out;
  const Json report = valid_report(slurp(path("r.json")));
  ASSERT_EQ(report["summary"]["mutants_survived"].size(), 1u);
}

// A clean run that fails is a violation (exit 1) naming Relacy's message.
TEST_F(ModelCli, FailingCleanRunIsAViolation) {
  const std::string d = fake_models(
      kFakeCatalogue,
      R"js(echo '{"failed":true,"iterations":7,"result":"DEADLOCK","message":"DEADLOCK (all threads blocked)","failing_iteration":7,"cpu_seconds":0.1,"iterations_per_second":70}'; exit 1)js");
  const Result r = tlab({"model", "--clean", "--models-dir", d, "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  const Json report = valid_report(r.out);
  ASSERT_EQ(report["cases"].size(), 1u);
  EXPECT_NE(report["cases"][0]["message"].get<std::string>().find("DEADLOCK (all threads"),
            std::string::npos);
}

// A crashing model binary is an internal error (3), never a pass; a search that
// outlives --timeout is killed and reported as a timeout (3), not as caught.
TEST_F(ModelCli, CrashAndTimeoutAreNotVerdicts) {
  const std::string crash = fake_models(kFakeCatalogue, "kill -SEGV $$");
  Result r = tlab({"model", "--models-dir", crash, "--json"});
  EXPECT_EQ(r.code, 3) << r.err;
  Json report = valid_report(r.out);
  for (const Json& c : report["cases"]) EXPECT_EQ(c["verdict"], "error") << c.dump();

  fs::remove_all(dir_ / "fake_models");
  const std::string slow = fake_models(kFakeCatalogue, "exec sleep 30");
  r = tlab({"model", "--models-dir", slow, "--mutant", "token_flag_only", "--timeout", "300ms",
            "--json"});
  EXPECT_EQ(r.code, 3) << r.err;
  report = valid_report(r.out);
  ASSERT_EQ(report["cases"].size(), 1u);
  EXPECT_EQ(report["cases"][0]["verdict"], "timeout");
  EXPECT_FALSE(report["cases"][0]["caught"].get<bool>());
}

// Bad input exits 2 and names the flag: unknown model, unknown test, options that
// do not apply to the scheduler, a mutant no model kills, a directory without models.
TEST_F(ModelCli, BadInputNamesTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model", "nosuch", "--models-dir", TLAB_MODELS_DIR}, "NAME"},
      {{"model", "token", "--test", "nosuch", "--models-dir", TLAB_MODELS_DIR}, "--test"},
      {{"model", "--scheduler", "full", "--iterations", "5", "--models-dir", TLAB_MODELS_DIR},
       "--iterations"},
      {{"model", "--context-bound", "2", "--models-dir", TLAB_MODELS_DIR}, "--context-bound"},
      {{"model", "--mutant", "coro_timer_leak", "--models-dir", TLAB_MODELS_DIR}, "--mutant"},
      {{"model", "--models-dir", "/nonexistent"}, "--models-dir"},
      {{"model", "--scheduler", "dfs"}, "--scheduler"},
      {{"model", "--clean", "--mutant", "token_flag_only"}, "--clean"},
  };
  for (const auto& [args, flag] : cases) {
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 2) << args[1] << " " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
}

// `tlab replay` refuses a model case and says how to re-run it instead.
TEST_F(ModelCli, ReplayOfAModelCaseNamesTheCommand) {
  ASSERT_EQ(tlab({"model", "token", "--test", "aba_3bit", "--models-dir", TLAB_MODELS_DIR,
                  "--report", path("r.json")})
                .code,
            0);
  const Result r = tlab({"replay", path("r.json"), "--case", "model.token.aba_3bit/random"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--test aba_3bit"), std::string::npos) << r.err;
}

// The kill matrix over the model and property layers: one row per mutant in the
// catalogue, model-killed mutants caught with a time, the queue mutants caught
// by the property tests, and exit 1 because some mutants (the scenario- and
// TSan-only ones) are caught by neither layer.
TEST_F(ModelCli, KillMatrixModelAndProperty) {
  const Result r = tlab({"mutants", "--layers", "model,property", "--models-dir", TLAB_MODELS_DIR,
                         "--property-bin", TLAB_PROPERTY_BIN, "--iterations", "20000", "--json",
                         "--report", path("r.json")});
  EXPECT_EQ(r.code, 1) << r.err;
  valid_report(slurp(path("r.json")));
  InputErrors errors;
  const auto doc = parse_json_text(r.out, "stdout", errors);
  ASSERT_TRUE(doc.has_value()) << r.out;
  const Json& rows = (*doc)["mutants"];
  ASSERT_EQ(rows.size(), kMutantCount);
  auto layers_of = [&](std::string_view name) {
    std::vector<std::string> out;
    for (const Json& row : rows) {
      if (row["name"] != name) continue;
      for (const Json& c : row["caught_by"]) out.push_back(c["layer"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(layers_of("token_flag_only"), std::vector<std::string>{"model"});
  EXPECT_EQ(layers_of("heap_unstable_ties"), std::vector<std::string>{"property"});
  EXPECT_TRUE(layers_of("data_race_plain_flag").empty());
  const Json& uncaught = (*doc)["summary"]["uncaught"];
  EXPECT_NE(std::find(uncaught.begin(), uncaught.end(), "data_race_plain_flag"), uncaught.end());
  EXPECT_TRUE((*doc)["summary"]["survivors"].empty());
}

// A fake model that claims token_flag_only and lets it survive shows up as a
// survivor in the matrix; a layer named in --layers whose binary is missing is an
// error (3), not a quiet gap.
TEST_F(ModelCli, KillMatrixSurvivorsAndMissingLayers) {
  const std::string d = fake_models(
      kFakeCatalogue,
      R"(echo '{"failed":false,"iterations":5,"result":"no error","cpu_seconds":0.1,"iterations_per_second":50}'; exit 0)");
  Result r = tlab({"mutants", "--layers", "model", "--models-dir", d, "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  InputErrors errors;
  auto doc = parse_json_text(r.out, "stdout", errors);
  ASSERT_TRUE(doc.has_value()) << r.out;
  ASSERT_EQ((*doc)["summary"]["survivors"].size(), 1u);
  EXPECT_NE((*doc)["summary"]["survivors"][0].get<std::string>().find("token_flag_only@model"),
            std::string::npos);

  r = tlab({"mutants", "--layers", "tsan", "--tsan-tlab", "/nonexistent/tlab"});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("--tsan-tlab /nonexistent/tlab"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tlab::tool
