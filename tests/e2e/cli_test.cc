// End-to-end tests of the tlab binary: it is run as a subprocess, as a user or CI
// would, and its exit code, stdout and stderr are checked. Fixtures: good/ and bad/.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"
#include "tlab/queue/strategy.h"

namespace {

namespace fs = std::filesystem;

using Result = tlab::testing::CliResult;
using tlab::testing::slurp;

// tlab: runs the binary with `args` from the fixture directory.
Result tlab(const std::vector<std::string>& args) {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return tlab::testing::run_tlab(TLAB_BIN, args, dir, TLAB_E2E_DIR);
}

// `tlab --version` prints the version and exits 0; so does `tlab run --version`.
TEST(CliTest, VersionExitsZero) {
  for (auto args : {std::vector<std::string>{"--version"}, {"run", "--version"}}) {
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("tlab 0.", 0), 0u) << r.out;
  }
}

// --help works on the tool and on every command, exit 0, usage on stdout, and each
// command's help ends with an example.
TEST(CliTest, HelpEverywhere) {
  for (const char* sub :
       {"", "run", "check", "list", "validate", "replay", "model", "mutants", "compare"}) {
    std::vector<std::string> args;
    if (*sub) args.emplace_back(sub);
    args.emplace_back("--help");
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << sub;
    EXPECT_NE(r.out.find(std::string("tlab ") + sub), std::string::npos) << sub << r.out;
    if (*sub) {
      EXPECT_NE(r.out.find("Example:"), std::string::npos) << sub << r.out;
    }
  }
}

// A mistyped subcommand or flag gets the nearest real one, and an unexpected
// argument is named rather than ignored.
TEST(CliTest, DidYouMeanForCommandsAndFlags) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"rnu"}, "did you mean 'run'?"},
      {{"mutnats"}, "did you mean 'mutants'?"},
      {{"run", "--repot", "x.json"}, "did you mean '--report'?"},
      {{"check", "--junti", "x.xml"}, "did you mean '--junit'?"},
      {{"model", "--iteratoins", "5"}, "did you mean '--iterations'?"},
      {{"compare", "--strategis=binary_heap"}, "did you mean '--strategies'?"},
      {{"list", "strategies", "extra"}, "unexpected argument 'extra'"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = tlab(args);
    EXPECT_EQ(r.code, 2) << args[0] << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args[0] << " " << r.err;
  }
}

// Usage errors exit 2 (never CLI11's own codes) and name the offending flag.
TEST(CliTest, UsageErrorsExitTwoAndNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "subcommand is required"},
      {{"--bogus"}, "--bogus"},
      {{"run", "--bogus"}, "--bogus"},
      {{"frobnicate"}, "frobnicate"},
      {{"run", "--seed", "-1"}, "--seed"},
      {{"run", "--seed", "x"}, "--seed"},
      {{"run", "--strategy", "fibonacci_heap"}, "--strategy"},
      {{"run", "--mutant", "no_such_mutant"}, "--mutant"},
      {{"run", "--budget", "0"}, "--budget"},
      {{"run", "--budget", "10h"}, "--budget"},
      {{"run", "--operations", "0"}, "--operations"},
      {{"run", "--operations", "100000001"}, "--operations"},
      {{"run", "--report"}, "--report"},
      {{"run", "--fail-on", "early_fyre"}, "--fail-on"},
      {{"list", "everything"}, "WHAT"},
      {{"validate"}, "FILES"},
      {{"replay"}, "REPORT"},
      {{"compare", "--workload", "nope"}, "--workload"},
      {{"compare", "--pending", "999"}, "--pending"},
      {{"compare", "good/racing_minimal.json", "--strategies", "binary_heap,nope"}, "--strategies"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = tlab(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(r.code, 2) << shown << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown;
  }
}

// --fail-on turns a passed case's unpromised finding into a failure, saying so;
// without it the same run passes and its summary still counts the finding. The
// subject fires one tick early and does not promise never_early; on the virtual
// clock of facility_ties its early fires happen in every run, whatever the load
// (a real clock's early fires do not: libuv's vanish when its loop runs late).
TEST(CliTest, FailOnTurnsChosenFindingsIntoFailures) {
  const std::string scenario = std::string(TLAB_SOURCE_DIR) + "/scenarios/facility_ties.json";
  const std::string subject = TLAB_EARLY_UNPROMISED;
  const fs::path dir = fs::temp_directory_path() / ("tlab_cli_test_" + std::to_string(::getpid()));
  const Result plain =
      tlab({"run", scenario, "--subject", subject, "--junit", (dir / "u.xml").string(), "--sarif",
            (dir / "u.sarif").string(), "--html", (dir / "u.html").string()});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("1 passed (1 with findings: early_fire "), std::string::npos)
      << plain.out;
  // Every output shows the finding, none as a failure (report/findings.h).
  const std::string junit = slurp(dir / "u.xml");
  EXPECT_NE(junit.find("<system-out>findings not promised by test_subject_early_unpromised"),
            std::string::npos)
      << junit;
  EXPECT_EQ(junit.find("<failure"), std::string::npos) << junit;
  const auto sarif = nlohmann::json::parse(slurp(dir / "u.sarif"));
  ASSERT_EQ(sarif["runs"][0]["results"].size(), 1u) << sarif.dump(2);
  EXPECT_EQ(sarif["runs"][0]["results"][0]["level"], "note");
  EXPECT_EQ(sarif["runs"][0]["results"][0]["ruleId"], "early_fire");
  const std::string html = slurp(dir / "u.html");
  EXPECT_NE(html.find("<tr "
                      "class=\"unpromised\"><td>facility_ties/test_subject_early_unpromised</"
                      "td><td>early_fire"),
            std::string::npos);
  const Result gated = tlab({"run", scenario, "--subject", subject, "--fail-on", "early_fire"});
  EXPECT_EQ(gated.code, 1) << gated.out << gated.err;
  EXPECT_NE(gated.out.find("0 passed, 1 failed"), std::string::npos) << gated.out;
  const Result other = tlab({"run", scenario, "--subject", subject, "--fail-on", "fifo_order"});
  EXPECT_EQ(other.code, 0) << other.out;
  const Result any = tlab({"run", scenario, "--subject", subject, "--fail-on", "any", "--json"});
  EXPECT_EQ(any.code, 1) << any.err;
  EXPECT_NE(any.out.find("--fail-on: early_fire="), std::string::npos) << any.out;
}

// On the built-in suite a subject's refusals are one counted line on stderr; -v
// lists each with why, and needs --subject.
TEST(CliTest, RefusalsAreCountedAndListedUnderVerbose) {
  const std::vector<std::string> args{"run", "--subject", "libuv", "--operations",
                                      "20",  "--shard",   "0/40"};
  const Result counted = tlab(args);
  ASSERT_LE(counted.code, 1) << counted.err;
  EXPECT_NE(counted.err.find(" built-in scenarios do not apply to subject libuv (-v lists them"),
            std::string::npos)
      << counted.err;
  EXPECT_EQ(counted.err.find("tlab: not applicable to subject libuv: "), std::string::npos)
      << counted.err;
  std::vector<std::string> verbose = args;
  verbose.emplace_back("-v");
  const Result listed = tlab(verbose);
  ASSERT_LE(listed.code, 1) << listed.err;
  EXPECT_NE(listed.err.find("tlab: not applicable to subject libuv: "), std::string::npos)
      << listed.err;
  EXPECT_EQ(listed.err.find("do not apply"), std::string::npos) << listed.err;
  const Result alone = tlab({"run", "-v", "--operations", "20"});
  EXPECT_EQ(alone.code, 2) << alone.err;
  EXPECT_NE(alone.err.find("--subject"), std::string::npos) << alone.err;
}

// A field only a subject plays is refused by plain validate with the hint to use
// --subject, and validate takes --subject: the same file is then ok for a subject
// that can play it, and refused, naming the pointer, for one that cannot.
TEST(CliTest, ValidateTakesASubject) {
  const fs::path dir = fs::temp_directory_path() / ("tlab_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "stale.json").string();
  std::ofstream(file) << R"({
    "name": "stale",
    "description": "cancels of settled timers' handles",
    "engine": {"strategies": ["all"], "tick_us": 100, "clock": "virtual"},
    "actors": [{"role": "scheduler", "count": 1, "delay_us": {"fixed": 100},
                "stale_probability": 0.5},
               {"role": "timer_thread", "count": 1}],
    "run": {"operations": 50, "budget_s": 10, "seed": 1}
  })";
  const Result plain = tlab({"validate", file});
  EXPECT_EQ(plain.code, 2) << plain.out << plain.err;
  EXPECT_NE(plain.err.find("/actors/0/stale_probability"), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("or run with --subject"), std::string::npos) << plain.err;
  const Result libuv = tlab({"validate", file, "--subject", "libuv"});
  EXPECT_EQ(libuv.code, 0) << libuv.err;
  EXPECT_NE(libuv.out.find(": ok (stale)"), std::string::npos) << libuv.out;
  const Result wait = tlab({"validate", file, "--subject", "timed_semaphore"});
  EXPECT_EQ(wait.code, 2) << wait.out << wait.err;
  EXPECT_NE(wait.err.find("subject timed_semaphore cannot play this scenario"), std::string::npos)
      << wait.err;
  const Result missing = tlab({"validate", file, "--subject", "no_such_subject"});
  EXPECT_EQ(missing.code, 2) << missing.err;
}

// The shipped adapters run by name from where the build staged them, and `tlab
// list subjects --json` says which are available. With the directory elsewhere
// (TLAB_ADAPTERS_DIR) a name is exit 2 saying what is missing and how to get it; a
// command with a '/' is never taken for a name.
TEST(CliTest, ShippedAdaptersRunByName) {
  const fs::path dir = fs::temp_directory_path() / ("tlab_cli_test_" + std::to_string(::getpid()));
  const std::string scenario = std::string(TLAB_SOURCE_DIR) + "/tests/exec/short_races.json";
  const Result ok = tlab({"run", scenario, "--subject", "exec:python-asyncio"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("python-asyncio"), std::string::npos) << ok.out;
  const Result listed = tlab({"list", "subjects", "--json"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  const auto doc = nlohmann::json::parse(listed.out);
  ASSERT_EQ(doc["adapters"].size(), 5u) << listed.out;
  EXPECT_EQ(doc["adapters"][0]["subject"], "exec:python-asyncio");
  EXPECT_EQ(doc["adapters"][0]["available"], true) << listed.out;
  const auto elsewhere = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all{"TLAB_ADAPTERS_DIR=" + (dir / "none").string(), TLAB_BIN};
    all.insert(all.end(), args.begin(), args.end());
    return tlab::testing::run_tlab("env", all, dir, TLAB_E2E_DIR);
  };
  const Result missing = elsewhere({"run", scenario, "--subject", "exec:go-time"});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("the go-time adapter is not in "), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("install golang-go"), std::string::npos) << missing.err;
  const Result unavailable = elsewhere({"list", "subjects", "--json"});
  EXPECT_EQ(nlohmann::json::parse(unavailable.out)["adapters"][4]["available"], false)
      << unavailable.out;
  const Result path = tlab({"run", scenario, "--subject", "exec:./python-asyncio"});
  EXPECT_EQ(path.code, 2) << path.err;
  EXPECT_NE(path.err.find("cannot start"), std::string::npos) << path.err;
}

// The README's example summary counts the built-in suite as it is today: its
// "N cases: N passed" line must equal the plan `tlab run` makes (read from a shard
// report's plan_cases, so nothing runs).
TEST(CliTest, ReadmeCountsTheBuiltInSuite) {
  const std::string readme = slurp(fs::path(TLAB_SOURCE_DIR) / "README.md");
  const std::regex line(R"((\d+) cases: (\d+) passed, 0 failed)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(readme, m, line)) << "README.md has no summary line";
  EXPECT_EQ(m[1], m[2]);
  const Result shard = tlab({"run", "--shard", "0/1000", "--json"});
  ASSERT_LE(shard.code, 1) << shard.err;
  const auto doc = nlohmann::json::parse(shard.out);
  EXPECT_EQ(std::to_string(doc["shard"]["plan_cases"].get<std::size_t>()), m[1].str())
      << "README.md's example says " << m[1] << " cases; update it from `tlab run`";
}

// `tlab list KIND --json` parses and lists exactly the catalogue.
TEST(CliTest, ListJsonMatchesCatalogues) {
  const std::vector<std::pair<std::string, std::size_t>> kinds = {
      {"strategies", tlab::kStrategyCount},
      {"mutants", tlab::kMutantCount},
      {"faults", tlab::kFaultPointCount}};
  for (const auto& [kind, size] : kinds) {
    const Result r = tlab({"list", kind, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 1u);
    EXPECT_EQ(j.at(kind).size(), size) << kind;
    for (const auto& row : j.at(kind)) EXPECT_TRUE(row.at("name").is_string());
  }
  const Result all = tlab({"list", "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  const auto j = nlohmann::json::parse(all.out);
  for (const char* k : {"strategies", "scenarios", "mutants", "faults"}) EXPECT_TRUE(j.contains(k));
  EXPECT_EQ(j.at("mutants")[0].at("name"), tlab::name_of(tlab::Mutant::kTokenFlagOnly));
  const Result text = tlab({"list", "faults"});
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("token.before_resolve_cas"), std::string::npos);
}

// A valid file validates (exit 0, "ok" on stdout).
TEST(CliTest, ValidateAcceptsGoodFile) {
  const Result r = tlab({"validate", "good/racing_minimal.json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("good/racing_minimal.json: ok"), std::string::npos) << r.out;
}

// Every bad fixture exits 2 with `file: /json/pointer: message` on stderr.
TEST(CliTest, BadFilesNameFileAndPointer) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"wrong_type", "/run/operations", "wrong type"},
      {"unknown_key", "/engine/tikc_us", "unknown key"},
      {"negative_count", "/actors/0/count", "must be >= 1"},
      {"out_of_range", "/engine/token_bits", "must be >= 3"},
      {"missing_required", "/run", "required property is missing"},
      {"empty", "/", "empty file"},
      {"not_json", "/actors/0/role", "not JSON (line 3, column"},
      {"huge_number", "/run/operations", "out of range"},
      {"huge_float", "/run/budget_s", "out of range"},
      {"unknown_strategy", "/engine/strategies/1", "unknown strategy 'fibonacci_heap'"},
      {"unknown_mutant", "/catches/1", "unknown mutant 'no_such_mutant'"},
      {"unknown_fault_point", "/faults/0/point", "unknown fault point 'token.no_such_window'"},
      {"uniform_reversed", "/actors/0/timeout_us/uniform", "greater than upper bound"},
      {"too_many_threads", "/actors", "cap of 256"},
      {"role_field", "/actors/0/period_us", "not used by role 'waiter'"},
      {"duplicate_key", "/name", "duplicate key"},
      {"operations_cap", "/run/operations", "must be <= 100000000"},
      {"budget_cap", "/run/budget_s", "must be <= 600"},
      {"not_object", "/", "wrong type: array"},
      {"unknown_role", "/actors/0/role", "\"juggler\""},
      {"sim_catches_on_subject", "/sim_catches", "never runs under simulation"},
  };
  std::size_t fixtures = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TLAB_E2E_DIR) / "bad"))
    fixtures += e.path().extension() == ".json";
  EXPECT_EQ(fixtures, cases.size()) << "every fixture in bad/ has a row here";
  for (const auto& [name, pointer, needle] : cases) {
    const std::string file = "bad/" + name + ".json";
    const Result r = tlab({"validate", file});
    EXPECT_EQ(r.code, 2) << name;
    const std::string prefix = file + ": " + pointer + ": ";
    EXPECT_NE(r.err.find(prefix), std::string::npos) << name << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << name << ": " << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << name;
  }
}

// Validating several files reports the errors of all of them and still exits 2;
// a missing file is an error with its path.
TEST(CliTest, ValidateReportsEveryFile) {
  const Result r =
      tlab({"validate", "good/racing_minimal.json", "bad/empty.json", "bad/nope.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("racing_minimal.json: ok"), std::string::npos);
  EXPECT_NE(r.err.find("bad/empty.json: /: empty file"), std::string::npos);
  EXPECT_NE(r.err.find("bad/nope.json: /: cannot read file"), std::string::npos);
}

// run/check/replay/compare check their input first and report it with exit 2,
// before any runner is involved (the runner-less case is in pipeline_test).
TEST(CliTest, RunCommandsRejectBadInputFirst) {
  Result r = tlab({"run", "bad/unknown_mutant.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad/unknown_mutant.json: /catches/1:"), std::string::npos) << r.err;
  r = tlab({"check", "good", "bad/empty.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad/empty.json: /: empty file"), std::string::npos) << r.err;
  r = tlab({"run", "good/racing_minimal.json", "--report", "/nonexistent/dir/r.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--report"), std::string::npos);
  r = tlab({"replay", "bad/not_json.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad/not_json.json: /"), std::string::npos);
  r = tlab({"replay", "good/racing_minimal.json"});  // a scenario is not a report
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("good/racing_minimal.json: /"), std::string::npos) << r.err;
  r = tlab({"compare", "bad/huge_number.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad/huge_number.json: /run/operations:"), std::string::npos);
}

}  // namespace

namespace {

// A scratch directory for hostile-input fixtures made at run time (FIFOs, links).
fs::path hostile_dir() {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_hostile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Reports are written only as regular files: a device node or a symbolic link in
// the way is refused with exit 2 naming the flag, and left untouched.
TEST(CliTest, OutputPathsMustBeRegularFiles) {
  const fs::path target = hostile_dir() / "target.json";
  { std::ofstream(target) << "keep"; }
  const fs::path link = hostile_dir() / "link.json";
  fs::remove(link);
  fs::create_symlink(target, link);
  for (const std::string& out : {std::string("/dev/null"), link.string()}) {
    const Result r = tlab({"run", "good/racing_minimal.json", "--report", out});
    EXPECT_EQ(r.code, 2) << out << ": " << r.err;
    EXPECT_NE(r.err.find("--report"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(target.string()), "keep");
  EXPECT_TRUE(fs::is_symlink(link));
}

}  // namespace
