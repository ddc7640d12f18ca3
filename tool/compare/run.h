// tlab/tool/compare/run.h: one `tlab compare` measurement run and its outputs.
//
// run_compare measures, in this order and in this one process: the baselines
// (baselines.h; clock_nanosleep at the process's timer slack, then, when asked, at
// 1 ns with the slack left at 1 ns for the rest of the run), then for every
// subject (strategies first, then peers, then --subject's through the subject
// ABI; a plugin one child process per cell, isolated_subject.h) every requested
// workload, cost workloads
// at every pending size. Each result carries the ratio to its baseline:
//
//   | workload                             | baseline         | ratio               |
//   |--------------------------------------|------------------|---------------------|
//   | insert_cancel, insert_expire, churn  | cas_uncontended  | ns/op / CAS ns      |
//   | mt_schedule_cancel                   | cas_contended    | ns/op / CAS ns      |
//   | lateness                             | clock_nanosleep  | p99 / p99 (same     |
//   |                                      |                  | slack as the run)   |
//   | cancel_to_resume                     | cv_wake          | p50 / p50           |
//
// Outputs: compare_results_table (stdout), compare_results_json (the report's
// "compare" section, tool/report/report_schema.json) and compare_results_html (html.h).
//
// Cost: dominated by the cells: (strategies + peers) x cost workloads x sizes x
// (build of `pending` timers + cell_ms of CPU), plus samples x 200 us per lateness
// subject. Ground rules: compare thread only; polls interrupted() between cells.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/subject.h"
#include "subjects/plugin.h"

namespace tlab::tool::compare {

struct CompareOptions {
  std::vector<Workload> workloads;
  std::vector<std::string> strategies;  // catalogue names
  bool peers = false;
  std::vector<SubjectFacts> subjects;  // --subject, measured through the subject ABI
  // --subject naming an engine that has a compare adapter but no subject ABI
  // (executor): measured by that adapter, on its own terms.
  std::vector<std::string> engines;
  std::vector<std::size_t> pending;
  CellSettings cell;
  bool slack_1ns = false;
};

struct ResultRow {
  Workload workload = Workload::kInsertCancel;
  std::string subject;
  bool peer = false;
  std::size_t pending = 0;  // cost workloads only
  CostResult cost;          // cost workloads
  Histogram latency;        // lateness / cancel_to_resume
  std::string baseline;
  // cancel_to_resume: the cv_wake p50 measured interleaved with this row's
  // subject (its ratio's denominator); -1 when the ratio uses the run's baselines.
  double baseline_value_ns = -1;
  double ratio = 0;
};

struct CompareResults {
  std::int64_t process_slack_ns = -1;  // at start
  std::int64_t run_slack_ns = -1;      // what workloads ran at
  Histogram nanosleep_process_slack;
  std::optional<Histogram> nanosleep_1ns;
  Histogram cv_wake;
  double cas_uncontended_ns = 0;
  double cas_contended_ns = 0;
  std::vector<ResultRow> rows;
  std::map<std::string, std::string> notes;  // subject -> how it is driven
  // Cells a --subject plugin crashed or hung in ("name: churn at 1000 pending:
  // killed by signal 11 (...)"; isolated_subject.h); compare then exits 1.
  std::vector<std::string> failures;
  double wall_s = 0;
  bool interrupted = false;

  // The clock_nanosleep histogram at the slack the workloads ran at.
  const Histogram& nanosleep_run() const {
    return nanosleep_1ns ? *nanosleep_1ns : nanosleep_process_slack;
  }
};

// run_compare: measures everything `o` asks for. `progress` gets a short status
// line before each cell (may be empty).
CompareResults run_compare(const CompareOptions& o,
                           const std::function<void(const std::string&)>& progress);

// compare_result_cells: the table's header row, then one row of cells per result
// row, as the text table (compare_results_table) and the HTML table (html.h) show it.
std::vector<std::vector<std::string>> compare_result_cells(const CompareResults& r);
std::string compare_results_table(const CompareOptions& o, const CompareResults& r);
nlohmann::ordered_json compare_results_json(const CompareOptions& o, const CompareResults& r);

}  // namespace tlab::tool::compare
