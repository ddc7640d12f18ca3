// End-to-end tests of `--subject` with plugins that misbehave (issue 11 §2): the
// real tlab binary, real shared libraries (plugins/bad_plugin.c and the crash and
// hang subjects of tests/subjects/). A plugin that is wrong before any case runs
// is exit 2 naming the library and the symbol or field; one that crashes or hangs
// inside a case is that case's verdict. tlab itself never crashes or hangs: every
// run here ends with one of its own exit codes (a signal would be -1).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using tlab::testing::CliResult;

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid keeps two runs of this test on one machine out of each other's way.
    scratch_ = fs::temp_directory_path() /
               ("tlab-plugin-" + std::to_string(::getpid()) + "-" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  CliResult tlab(const std::vector<std::string>& args) {
    return tlab::testing::run_tlab(TLAB_BIN, args, scratch_);
  }
  static std::string bad(const std::string& variant) {
    return std::string(TLAB_BAD_PLUGIN_DIR) + "/libtlab_bad_plugin_" + variant + ".so";
  }
  fs::path scratch_;
};

struct Refusal {
  const char* variant;
  const char* names;  // the symbol or field the message must name
  const char* says;   // and a phrase of why
};

// Every plugin that is wrong before a case runs is refused with exit 2, by run,
// check and list alike, naming the library and what is wrong, and nothing runs.
TEST_F(PluginTest, BadDescriptorsAreExit2NamingLibraryAndField) {
  const Refusal refusals[] = {
      {"no_entry", "tlab_subject_entry", "does not export"},
      {"entry_null", "tlab_subject_entry", "returned NULL"},
      {"wrong_abi", "abi_version", "is 2"},
      {"short_struct", "struct_size", "is 16"},
      {"null_schedule", "schedule", "is NULL"},
      {"bad_promises", "promises", "PENDING_COUNT is promised but pending is NULL"},
      {"unknown_bits", "promises", "unknown bits 0x10000000000"},
      {"no_periodic_fn", "schedule_periodic", "is NULL, but periodic names kinds it arms"},
      {"garbage", "abi_version", "this tlab speaks subject ABI version 1"},
      {"bad_name_ptr", "reading the descriptor", "the probe died"},
      {"entry_crash", "calling the entry point", "Segmentation fault"},
      {"ctor_crash", "loading the library", "Segmentation fault"},
  };
  for (const Refusal& r : refusals) {
    SCOPED_TRACE(r.variant);
    for (const char* command : {"run", "check", "list"}) {
      std::vector<std::string> args{command, "--subject", bad(r.variant)};
      if (std::string(command) == "list") args.insert(args.begin() + 1, "subjects");
      const CliResult res = tlab(args);
      EXPECT_EQ(res.code, 2) << command << ": " << res.err;
      EXPECT_NE(res.err.find(bad(r.variant)), std::string::npos) << res.err;
      EXPECT_NE(res.err.find(r.names), std::string::npos) << res.err;
      EXPECT_NE(res.err.find(r.says), std::string::npos) << res.err;
      EXPECT_EQ(res.out, "") << "nothing may run: " << res.out;
    }
  }
}

// A plugin named without '/' is not looked for in the current folder (dlopen's
// rule); when a file of that name is there, the error says to write ./NAME.
TEST_F(PluginTest, ANameInTheCurrentFolderGetsTheDotSlashHint) {
  fs::copy_file(bad("wrong_abi"), scratch_ / "my_timer.so");
  const CliResult here = tlab::testing::run_tlab(TLAB_BIN, {"run", "--subject", "my_timer.so"},
                                                 scratch_, scratch_.string());
  EXPECT_EQ(here.code, 2) << here.err;
  EXPECT_NE(here.err.find("for the file here, write --subject ./my_timer.so"), std::string::npos)
      << here.err;
  const CliResult elsewhere = tlab({"run", "--subject", "my_timer.so"});
  EXPECT_EQ(elsewhere.code, 2) << elsewhere.err;
  EXPECT_EQ(elsewhere.err.find("write --subject ./"), std::string::npos) << elsewhere.err;
}

// An entry point that never returns is given up on (the probe's limit) and
// reported as hung, without running any case.
TEST_F(PluginTest, HungEntryPointIsExit2) {
  const CliResult res = tlab({"list", "subjects", "--subject", bad("entry_hang")});
  EXPECT_EQ(res.code, 2) << res.err;
  EXPECT_NE(res.err.find("hung while calling the entry point"), std::string::npos) << res.err;
}

// Paths that are not plugins at all: a missing file, a directory, a file that is
// not a shared object, a name that is neither a subject nor a path.
TEST_F(PluginTest, NotAPluginIsExit2) {
  const fs::path text = scratch_ / "not_a_library.so";
  { std::ofstream(text) << "hello\n"; }
  struct Case {
    std::string spec, says;
  } cases[] = {
      {(scratch_ / "missing.so").string(), "No such file or directory"},
      {scratch_.string() + "/", "is a directory"},
      {text.string(), "cannot load"},
      {"no_such_subject", "no such subject"},
      {bad("wrong_abi") + ":no_such_symbol", "does not export the entry symbol `no_such_symbol`"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const CliResult res = tlab({"run", "--subject", c.spec});
    EXPECT_EQ(res.code, 2) << res.err;
    EXPECT_NE(res.err.find(c.says), std::string::npos) << res.err;
  }
}

// --subject cannot be combined with core's strategies, mutants or models.
TEST_F(PluginTest, SubjectExcludesCoreOnlyFlags) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--subject", "libuv", "--strategy", "binary_heap"},
        std::vector<std::string>{"run", "--subject", "libuv", "--mutant", "token_flag_only"},
        std::vector<std::string>{"check", "--subject", "libuv", "--models"}}) {
    const CliResult res = tlab(args);
    EXPECT_EQ(res.code, 2) << res.err;
    EXPECT_NE(res.err.find("excludes"), std::string::npos) << res.err;
  }
}

// A subject that segfaults inside a case is that case's crash verdict (exit 1), a
// subject that hangs inside poll is that case's timeout (exit 3); tlab reports
// both and exits with its own code, and the good subject passes the same scenario.
TEST_F(PluginTest, CrashAndHangInsideACaseAreVerdicts) {
  const std::string scenario = std::string(TLAB_E2E_DIR) + "/plugins/facility_small.json";
  const fs::path report = scratch_ / "r.json";
  CliResult res =
      tlab({"run", scenario, "--subject", TLAB_CRASH_SUBJECT, "--report", report.string()});
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  auto doc = nlohmann::json::parse(tlab::testing::slurp(report));
  ASSERT_EQ(doc["cases"].size(), 1u);
  EXPECT_EQ(doc["cases"][0]["verdict"], "fail");
  EXPECT_TRUE(doc["cases"][0]["violations"].contains("crash")) << doc["cases"][0].dump();
  EXPECT_EQ(doc["cases"][0]["subject_spec"], TLAB_CRASH_SUBJECT);

  res = tlab({"run", scenario, "--subject", TLAB_HANG_SUBJECT, "--budget", "2s", "--report",
              report.string()});
  EXPECT_EQ(res.code, 3) << res.out << res.err;
  doc = nlohmann::json::parse(tlab::testing::slurp(report));
  EXPECT_EQ(doc["cases"][0]["verdict"], "timeout") << doc["cases"][0].dump();

  res = tlab({"run", scenario, "--subject", TLAB_GOOD_SUBJECT});
  EXPECT_EQ(res.code, 0) << res.out << res.err;
}

// A built-in timed wait (core's TimedSemaphore through the ABI) plays the
// built-in timed-wait scenarios on the generic driver, and passes them.
TEST_F(PluginTest, BuiltinTimedWaitPassesItsScenarios) {
  const fs::path report = scratch_ / "r.json";
  const CliResult res =
      tlab({"check", "--subject", "timed_semaphore", "--report", report.string()});
  EXPECT_EQ(res.code, 0) << res.out << res.err;
  const auto doc = nlohmann::json::parse(tlab::testing::slurp(report));
  ASSERT_GE(doc["cases"].size(), 2u);
  for (const auto& c : doc["cases"]) {
    EXPECT_EQ(c["verdict"], "pass") << c.dump();
    EXPECT_EQ(c["subject"], "timed_semaphore");
  }
}

// The built-in self-driven facilities compare measures with a benchmark hook (the
// executor and both sharded services) play the built-in facility scenarios on the
// generic driver and pass them: each configuration compare measures is checked.
TEST_F(PluginTest, BuiltinSelfDrivenFacilitiesPassTheirScenarios) {
  for (const std::string s : {"executor", "sharded_service", "sharded_service_per_thread"}) {
    SCOPED_TRACE(s);
    const fs::path report = scratch_ / ("r_" + s + ".json");
    const CliResult res = tlab({"check", "--subject", s, "--report", report.string()});
    EXPECT_EQ(res.code, 0) << res.out << res.err;
    const auto doc = nlohmann::json::parse(tlab::testing::slurp(report));
    ASSERT_GE(doc["cases"].size(), 5u);
    for (const auto& c : doc["cases"]) {
      EXPECT_EQ(c["verdict"], "pass") << c.dump();
      EXPECT_EQ(c["subject"], s);
    }
  }
}

// The property layer's failed case says in its JSON which promise the shrunk
// counterexample breaks (a field, not only the transcript's text), and the
// command that replays it; a passing one has no such field.
TEST_F(PluginTest, PropertyCaseNamesTheBrokenPromise) {
  const std::string scenario = std::string(TLAB_E2E_DIR) + "/plugins/facility_small.json";
  const fs::path report = scratch_ / "r.json";
  CliResult res =
      tlab({"check", scenario, "--subject", TLAB_LATE_SUBJECT, "--report", report.string()});
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  auto property_of = [&](const fs::path& p) {
    const auto doc = nlohmann::json::parse(tlab::testing::slurp(p));
    for (const auto& c : doc["cases"]) {
      if (c["scenario"] == "properties") return c;
    }
    return nlohmann::json();
  };
  const auto bad = property_of(report);
  ASSERT_TRUE(bad.is_object()) << res.out;
  EXPECT_EQ(bad["verdict"], "fail");
  EXPECT_EQ(bad["property"]["broken"], "delivery") << bad.dump();
  EXPECT_NE(bad["property"]["command"].get<std::string>().find("--property-seed 1"),
            std::string::npos);
  res = tlab({"check", scenario, "--subject", TLAB_GOOD_SUBJECT, "--report", report.string()});
  EXPECT_EQ(res.code, 0) << res.out << res.err;
  const auto good = property_of(report);
  ASSERT_TRUE(good.is_object()) << res.out;
  EXPECT_FALSE(good["property"].contains("broken")) << good.dump();
  EXPECT_EQ(good["counters"]["sequences"], 20000) << good.dump();
}

// compare measures a plugin one child per cell: a good plugin gets its rows; one
// that segfaults in a cell gets a FAILED line naming the cell and signal, exit 1,
// and the other subjects' rows are still measured.
TEST_F(PluginTest, CompareMeasuresPluginsInAChild) {
  const std::vector<std::string> common{
      "compare",   "--strategies", "binary_heap", "--workload", "insert_cancel",
      "--pending", "1000",         "--cell-ms",   "2",          "--samples",
      "20"};
  std::vector<std::string> args = common;
  args.insert(args.end(), {"--subject", TLAB_GOOD_SUBJECT});
  CliResult res = tlab(args);
  EXPECT_EQ(res.code, 0) << res.out << res.err;
  EXPECT_NE(res.out.find("insert_cancel  test_subject_correct"), std::string::npos) << res.out;

  args = common;
  args.insert(args.end(), {"--subject", TLAB_CRASH_SUBJECT});
  res = tlab(args);
  EXPECT_EQ(res.code, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("FAILED test_subject_crash: insert_cancel at 1000 pending: killed by "
                         "signal 11"),
            std::string::npos)
      << res.out;
  EXPECT_NE(res.out.find("insert_cancel  binary_heap"), std::string::npos) << res.out;
}

// A subject case replays on the same subject from the report alone.
TEST_F(PluginTest, SubjectCaseReplays) {
  const std::string scenario = std::string(TLAB_E2E_DIR) + "/plugins/facility_small.json";
  const fs::path report = scratch_ / "r.json";
  CliResult res =
      tlab({"run", scenario, "--subject", TLAB_CRASH_SUBJECT, "--report", report.string()});
  ASSERT_EQ(res.code, 1) << res.err;
  res = tlab({"replay", report.string()});
  EXPECT_EQ(res.code, 1) << res.err;
  EXPECT_NE(res.err.find("recorded verdict fail, replayed verdict fail (reproduced)"),
            std::string::npos)
      << res.err;
}

}  // namespace
