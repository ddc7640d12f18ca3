// End-to-end tests of the real tlab binary with the stress runner: real cases, real
// threads, real reports. (tests/e2e/pipeline_test.cc covers the same pipeline with a
// scripted runner; these show the stress runner fills it honestly.)
#include <expat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "base/embedded.h"
#include "base/json_input.h"
#include "support/cli_run.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code;
  std::string out;
};

using testing::slurp;

class RunnerE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tlab_runner_e2e_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs tlab with `args`; stdout and stderr together.
  CliRun tlab(const std::string& args) {
    const std::string cmd = std::string(TLAB_BIN) + " " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string scenario(const std::string& name) {
    return std::string(TLAB_SOURCE_DIR) + "/scenarios/" + name + ".json";
  }

  static Json valid_report(const std::string& text) {
    InputErrors errors;
    auto doc = parse_json_text(text, "report", errors);
    EXPECT_TRUE(doc.has_value());
    if (!doc) return Json{};
    SchemaValidator schema(embedded_report_schema());
    EXPECT_TRUE(schema.validate(*doc, "report", errors))
        << (errors.empty() ? "" : errors[0].message);
    return *doc;
  }

  fs::path dir_;
};

// A passing real run writes a report that validates against tool/report/report_schema.json,
// with counters and latency from the runner, and a JUnit file expat parses.
TEST_F(RunnerE2e, ReportValidatesAndJunitParses) {
  const CliRun r = tlab("run " + scenario("racing_cancellers") + " --strategy all --report " +
                        path("r.json") + " --junit " + path("j.xml"));
  ASSERT_EQ(r.code, 0) << r.out;
  const Json report = valid_report(slurp(path("r.json")));
  ASSERT_EQ(report["cases"].size(), 5u);
  const Json& c = report["cases"][0];
  EXPECT_EQ(c["verdict"], "pass");
  EXPECT_GT(c["counters"]["waiter_armings"].get<int>(), 0);
  EXPECT_GT(c["latency"]["fire_lateness"]["count"].get<int>(), 0);
  const std::string xml = slurp(path("j.xml"));
  XML_Parser parser = XML_ParserCreate(nullptr);
  int testcases = 0;
  XML_SetUserData(parser, &testcases);
  XML_SetStartElementHandler(parser, [](void* data, const XML_Char* name, const XML_Char**) {
    if (std::string(name) == "testcase") ++*static_cast<int*>(data);
  });
  EXPECT_EQ(XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1), XML_STATUS_OK) << xml;
  XML_ParserFree(parser);
  EXPECT_EQ(testcases, 5);
}

// The issue's acceptance line: the flag-only token mutant fails aba_wraparound with
// exit 1 and the table names the violation; replaying the report's failing case
// reproduces the failure from its recorded seed, mutant and strategy.
TEST_F(RunnerE2e, MutantFailsAndReplayReproduces) {
  const CliRun r = tlab("run --mutant token_flag_only " + scenario("aba_wraparound") +
                        " --strategy binary_heap --report " + path("m.json"));
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("wrong_result"), std::string::npos) << r.out;
  const Json report = valid_report(slurp(path("m.json")));
  const Json& c = report["cases"][0];
  EXPECT_EQ(c["verdict"], "fail");
  EXPECT_NE(c["violations"]["wrong_result"]["first_example"].get<std::string>().find("waiter#"),
            std::string::npos);
  EXPECT_TRUE(c["counters"].contains("detect_us"));
  const CliRun replay = tlab("replay " + path("m.json") + " --report " + path("replay.json"));
  EXPECT_EQ(replay.code, 1) << replay.out;
  const Json again = valid_report(slurp(path("replay.json")));
  EXPECT_EQ(again["cases"][0]["verdict"], "fail");
  EXPECT_EQ(again["cases"][0]["mutant"], "token_flag_only");
}

// A case that hangs (shutdown_now() never wakes a timer thread waiting for a 3 s
// head) never hangs tlab: the child's watchdog fires at the 300 ms budget and
// reports verdict timeout with every actor's state; `run` exits 3.
TEST_F(RunnerE2e, WatchdogTimeoutReportsActors) {
  const CliRun r =
      tlab("run " + scenario("missed_notify") +
           " --strategy binary_heap --mutant timer_shutdown_no_wake --budget 300ms --report " +
           path("t.json"));
  EXPECT_EQ(r.code, 3) << r.out;
  const Json report = valid_report(slurp(path("t.json")));
  EXPECT_EQ(report["cases"][0]["verdict"], "timeout") << r.out;
  const std::string message = report["cases"][0]["message"];
  EXPECT_NE(message.find("budget"), std::string::npos) << message;
  EXPECT_NE(message.find("scheduler#0: done"), std::string::npos) << message;
}

}  // namespace
}  // namespace tlab::tool
