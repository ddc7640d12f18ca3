// Tests of `tlab compare` (tool/commands/compare.cc, tool/compare/): option validation, a
// tiny end-to-end measurement whose report validates against the schema and whose
// HTML carries SVG charts, and the allocation counter on known patterns.
#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "compare/alloc_counter.h"
#include "base/embedded.h"
#include "base/json_input.h"

namespace tlab::tool {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun cli(std::vector<std::string> args) {
  std::vector<const char*> argv{"tlab", "compare"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliEnv env{&out, &err, nullptr};
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), env);
  return {code, out.str(), err.str()};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every bad option value exits 2 before measuring anything, and the message names the flag.
TEST(CompareCliTest, BadOptionsExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--workload", "fastest"}, "--workload"},
      {{"--workload", "all,churn"}, "--workload"},
      {{"--strategies", "fibonacci_heap"}, "--strategies"},
      {{"--strategies", "all,binary_heap"}, "--strategies"},
      {{"--pending", "999"}, "--pending"},
      {{"--pending", "10000001"}, "--pending"},
      {{"--pending", "1000,lots"}, "--pending"},
      {{"--cell-ms", "0"}, "--cell-ms"},
      {{"--samples", "0"}, "--samples"},
      {{"--threads", "1"}, "--threads"},
      {{"--report", "/nonexistent-dir/r.json"}, "--report"},
      {{"--html", "/nonexistent-dir/c.html"}, "--html"},
  };
  for (const auto& [args, flag] : cases) {
    const CliRun r = cli(args);
    EXPECT_EQ(r.code, 2) << args.front() << " " << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// A tiny run of every workload on two strategies and every peer writes a report
// that validates against the report schema, and an HTML page with inline SVG.
TEST(CompareCliTest, TinyRunWritesValidReportAndHtml) {
  // One directory per process, so parallel runs (ctest -j, repeats) never share it.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tlab_compare_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "r.json").string();
  const std::string html = (dir / "c.html").string();
  const CliRun r =
      cli({"--strategies", "hierarchical_wheel,binary_heap", "--peers", "--pending", "1000",
           "--cell-ms", "2", "--samples", "20", "--report", report, "--html", html});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("insert_cancel"), std::string::npos);
  EXPECT_NE(r.out.find("libevent"), std::string::npos);
  InputErrors errors;
  auto doc = parse_json_text(slurp(report), report, errors);
  ASSERT_TRUE(doc) << (errors.empty() ? "" : errors.front().str());
  SchemaValidator validator(embedded_report_schema());
  EXPECT_TRUE(validator.validate(*doc, report, errors))
      << (errors.empty() ? "" : errors.front().str());
  const Json& results = doc->at("compare").at("results");
  // 6 subjects x (4 cost workloads x 1 size + lateness + cancel_to_resume).
  EXPECT_EQ(results.size(), 6u * 6u);
  for (const Json& row : results) {
    if (row.at("workload") == "insert_cancel") {
      EXPECT_GT(row.at("bytes_per_timer").get<double>(), 0);
    }
    EXPECT_GT(row.at("ratio").get<double>(), 0) << row.dump();
  }
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("lateness: CDF"), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no external fetch
  std::filesystem::remove_all(dir);
}

// `--subject executor` measures seed 003's Executor through its own adapter
// (executor_subject.cc): a row for every workload, each with work measured.
TEST(CompareCliTest, ExecutorSubjectRunsEveryWorkload) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tlab_compare_exec_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "r.json").string();
  const CliRun r = cli({"--subject", "executor", "--strategies", "binary_heap", "--pending",
                        "1000", "--cell-ms", "2", "--samples", "20", "--report", report});
  ASSERT_EQ(r.code, 0) << r.err;
  InputErrors errors;
  auto doc = parse_json_text(slurp(report), report, errors);
  ASSERT_TRUE(doc) << (errors.empty() ? "" : errors.front().str());
  std::size_t rows = 0;
  for (const Json& row : doc->at("compare").at("results")) {
    if (row.at("impl") != "executor") continue;
    ++rows;
    EXPECT_GT(row.at("ratio").get<double>(), 0) << row.dump();
  }
  EXPECT_EQ(rows, 6u);
  std::filesystem::remove_all(dir);
}

// 1000 new[] of 100 bytes count 1000 allocations of malloc's usable size (at least
// 100, at most one 16-byte granule more), and freeing them gives the bytes back.
TEST(AllocCounterTest, CountsKnownOperatorNewPattern) {
  std::vector<char*> blocks;
  blocks.reserve(1000);  // outside the window
  AllocWindow w;
  for (int i = 0; i < 1000; ++i) blocks.push_back(new char[100]);
  EXPECT_EQ(w.allocations(), 1000u);
  EXPECT_GE(w.live_bytes(), 100 * 1000);
  EXPECT_LE(w.live_bytes(), 116 * 1000);
  for (char* b : blocks) delete[] b;
  EXPECT_EQ(w.live_bytes(), 0);
}

// The malloc-compatible functions handed to libuv/libevent count the same way,
// realloc included.
TEST(AllocCounterTest, CountsMallocFamily) {
  AllocWindow w;
  void* a = counting_malloc(1000);
  void* b = counting_calloc(10, 100);
  EXPECT_GE(w.live_bytes(), 2000);
  EXPECT_LE(w.live_bytes(), 2032);
  a = counting_realloc(a, 100000);
  EXPECT_GE(w.live_bytes(), 101000);
  EXPECT_LE(w.live_bytes(), 101000 + 4096 + 32);
  counting_free(a);
  counting_free(b);
  EXPECT_EQ(w.live_bytes(), 0);
  EXPECT_EQ(w.allocations(), 3u);
}

}  // namespace
}  // namespace tlab::tool
