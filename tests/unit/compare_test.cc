// Tests of `tlab compare` (tool/commands/compare.cc, tool/compare/): option validation, a
// tiny end-to-end measurement whose report validates against the schema and whose
// HTML carries SVG charts, and the allocation counter on known patterns.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <tuple>

#include <unistd.h>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "compare/alloc_counter.h"
#include "compare/summary.h"
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

// read_valid_report: the report at `path`, parsed and checked against the report
// schema (a failure is recorded; an unparsable file gives an empty object).
Json read_valid_report(const std::string& path) {
  InputErrors errors;
  auto doc = parse_json_text(slurp(path), path, errors);
  if (!doc) {
    ADD_FAILURE() << (errors.empty() ? "" : errors.front().str());
    return Json::object();
  }
  SchemaValidator validator(embedded_report_schema());
  EXPECT_TRUE(validator.validate(*doc, path, errors))
      << (errors.empty() ? "" : errors.front().str());
  return *doc;
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
      {{"--threads", "0"}, "--threads"},
      {{"--threads", "65"}, "--threads"},
      {{"--threads", "2,2"}, "--threads"},
      {{"--rounds", "0"}, "--rounds"},
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
           "--cell-ms", "2", "--samples", "20", "--rounds", "2", "--report", report, "--html",
           html});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("insert_cancel"), std::string::npos);
  EXPECT_NE(r.out.find("libevent"), std::string::npos);
  const Json doc = read_valid_report(report);
  ASSERT_TRUE(doc.contains("compare"));
  const Json& results = doc.at("compare").at("results");
  // 6 subjects x (5 cost workloads x 1 size + lateness + cancel_to_resume).
  EXPECT_EQ(results.size(), 6u * 7u);
  for (const Json& row : results) {
    if (row.at("workload") == "insert_cancel") {
      EXPECT_GT(row.at("bytes_per_timer").get<double>(), 0);
    }
    // A lateness ratio is 0 for a peer that fired early throughout (libevent's
    // coarse clock can, with 20 samples); every other ratio is positive.
    if (row.at("workload") == "lateness") {
      EXPECT_GE(row.at("ratio").get<double>(), 0) << row.dump();
    } else {
      EXPECT_GT(row.at("ratio").get<double>(), 0) << row.dump();
    }
    // Every cost row is the median of its 2 rounds, each kept.
    if (!row.at("pending").is_null()) {
      ASSERT_EQ(row.at("round_ns_per_op").size(), 2u) << row.dump();
      const double a = row.at("round_ns_per_op")[0].get<double>();
      const double b = row.at("round_ns_per_op")[1].get<double>();
      EXPECT_DOUBLE_EQ(row.at("ns_per_op").get<double>(), (a + b) / 2) << row.dump();
    }
  }
  // Two strategies and four peers measured every cost cell: one versus row each.
  EXPECT_EQ(doc.at("compare").at("versus_peers").size(), 5u);
  EXPECT_TRUE(doc.at("compare").at("scaling").empty());  // one thread count
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("lateness: CDF"), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no external fetch
  std::filesystem::remove_all(dir);
}

// `--subject executor` measures seed 003's Executor through its one definition
// (subjects/builtin/executor.h: its descriptor, driven on its workers by its
// benchmark hook): a row for every workload, each with work measured.
TEST(CompareCliTest, ExecutorSubjectRunsEveryWorkload) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tlab_compare_exec_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "r.json").string();
  const CliRun r = cli({"--subject", "executor", "--strategies", "binary_heap", "--pending",
                        "1000", "--cell-ms", "2", "--samples", "20", "--report", report});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json doc = read_valid_report(report);
  ASSERT_TRUE(doc.contains("compare"));
  std::size_t rows = 0;
  for (const Json& row : doc.at("compare").at("results")) {
    if (row.at("impl") != "executor") continue;
    ++rows;
    EXPECT_GT(row.at("ratio").get<double>(), 0) << row.dump();
  }
  EXPECT_EQ(rows, 7u);
  std::filesystem::remove_all(dir);
}

// --threads 1,2: one row per mt workload and thread count for every subject, and a
// scaling table whose rows are each subject's ops/s over its own at 1 thread in the
// same workload.
TEST(CompareCliTest, ThreadListGivesOneRowPerCountAndAScalingTable) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tlab_compare_scaling_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "r.json").string();
  const CliRun r = cli({"--workload", "mt_schedule_cancel,mt_churn", "--strategies", "hashed_wheel",
                        "--peers",
                        "--subject", "executor", "--subject", "sharded_service", "--pending",
                        "1000", "--cell-ms", "4", "--threads", "2,1", "--rounds", "1",
                        "--report", report});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("scaling:"), std::string::npos) << r.out;
  const Json doc = read_valid_report(report);
  ASSERT_TRUE(doc.contains("compare"));
  const Json& c = doc.at("compare");
  EXPECT_EQ(c.at("settings").at("threads"), Json::array({1, 2}));
  std::map<std::tuple<std::string, std::string, int>, double> ops;
  for (const Json& row : c.at("results")) {
    EXPECT_GT(row.at("ops_per_s").get<double>(), 0) << row.dump();
    ops[{row.at("workload").get<std::string>(), row.at("impl").get<std::string>(),
         row.at("threads").get<int>()}] = row.at("ops_per_s").get<double>();
  }
  // 7 subjects (hashed_wheel, executor, sharded_service, 4 peers) x 2 workloads x
  // 2 thread counts.
  EXPECT_EQ(ops.size(), 28u);
  ASSERT_EQ(c.at("scaling").size(), 28u);
  for (const Json& s : c.at("scaling")) {
    const std::string w = s.at("workload").get<std::string>();
    const std::string impl = s.at("impl").get<std::string>();
    EXPECT_EQ(s.at("base_threads"), 1);
    EXPECT_DOUBLE_EQ(s.at("vs_base").get<double>(),
                     ops.at({w, impl, s.at("threads").get<int>()}) / ops.at({w, impl, 1}))
        << s.dump();
  }
  // One versus row per workload and thread count.
  EXPECT_EQ(c.at("versus_peers").size(), 4u);
  std::filesystem::remove_all(dir);
}

compare::ResultRow cost_row(compare::Workload w, std::string subject, bool peer,
                           std::size_t threads, double cpu_ns, double wall_ns) {
  compare::ResultRow x;
  x.workload = w;
  x.subject = std::move(subject);
  x.peer = peer;
  x.pending = 1000;
  x.threads = threads;
  x.cost.ns_per_op = cpu_ns;
  x.cost.wall_ns_per_op = wall_ns;
  return x;
}

// versus_rows picks our cheapest and the cheapest peer per cell, by CPU ns/op on one
// thread and by wall ns/op for mt_schedule_cancel; a cell without a peer has no row.
TEST(CompareSummaryTest, VersusPicksEachSidesCheapestByTheRightMeasure) {
  using compare::Workload;
  compare::CompareResults r;
  r.rows = {cost_row(Workload::kInsertCancel, "a", false, 0, 20, 90),
            cost_row(Workload::kInsertCancel, "b", false, 0, 10, 95),
            cost_row(Workload::kInsertCancel, "p", true, 0, 50, 50),
            cost_row(Workload::kInsertCancel, "q", true, 0, 40, 60),
            cost_row(Workload::kMtScheduleCancel, "a", false, 2, 100, 30),
            cost_row(Workload::kMtScheduleCancel, "b", false, 2, 60, 45),
            cost_row(Workload::kMtScheduleCancel, "p", true, 2, 70, 90),
            cost_row(Workload::kChurn, "a", false, 0, 10, 10)};
  const auto v = compare::versus_rows(r);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].ours, "b");
  EXPECT_EQ(v[0].peer, "q");
  EXPECT_DOUBLE_EQ(v[0].factor, 4.0);
  EXPECT_EQ(v[0].measure, "cpu_ns_per_op");
  EXPECT_EQ(v[1].ours, "a");  // least wall time, not least CPU
  EXPECT_EQ(v[1].peer, "p");
  EXPECT_DOUBLE_EQ(v[1].factor, 3.0);
  EXPECT_EQ(v[1].measure, "wall_ns_per_op");
}

// scaling_rows: a subject's ops/s over its own at the fewest threads, only where it
// ran at two or more thread counts.
TEST(CompareSummaryTest, ScalingIsOpsPerSecondOverTheFewestThreads) {
  using compare::Workload;
  compare::CompareResults r;
  r.rows = {cost_row(Workload::kMtScheduleCancel, "a", false, 4, 0, 25),
            cost_row(Workload::kMtScheduleCancel, "a", false, 2, 0, 50),
            cost_row(Workload::kMtScheduleCancel, "b", false, 2, 0, 10)};
  const auto s = compare::scaling_rows(r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].threads, 2u);
  EXPECT_DOUBLE_EQ(s[0].vs_base, 1.0);
  EXPECT_EQ(s[1].threads, 4u);
  EXPECT_EQ(s[1].base_threads, 2u);
  EXPECT_DOUBLE_EQ(s[1].vs_base, 2.0);
  EXPECT_DOUBLE_EQ(s[1].ops_per_s, 1e9 / 25);
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
