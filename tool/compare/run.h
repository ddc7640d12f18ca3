// tlab/tool/compare/run.h: one `tlab compare` measurement run and its outputs.
//
// run_compare measures, in this order and in this one process: the baselines
// (baselines.h; clock_nanosleep at the process's timer slack, then, when asked, at
// 1 ns with the slack left at 1 ns for the rest of the run), then the cost cells in
// `rounds` interleaved rounds, then the latency workloads. A cost cell is one
// subject x cost workload x pending size (x thread count for the mt workloads);
// subjects are strategies first, then peers, then --subject's, every one through
// the subject ABI: a built-in row's own descriptor and hook (builtin_subject.h),
// a plugin one child process per cell (isolated_subject.h). Each
// round measures every cell once, in that order, plus both CAS baselines, so a
// cell's rounds are spread over the whole run: a load spike on a shared machine
// lands in one round of many cells rather than in every round of one. A row
// reports the median of its rounds (ns/op, wall ns/op and bytes each their own
// median; every round's ns/op is kept), and its ratio divides medians. Each result
// carries the ratio to its baseline:
//
//   | workload                             | baseline         | ratio               |
//   |--------------------------------------|------------------|---------------------|
//   | insert_cancel, insert_expire, churn  | cas_uncontended  | ns/op / CAS ns      |
//   | mt_schedule_cancel, mt_churn         | cas_contended    | ns/op / CAS ns      |
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

#include "compare/results.h"
#include "compare/subject.h"
#include "subjects/plugin.h"

namespace tlab::tool::compare {

struct CompareOptions {
  std::vector<Workload> workloads;
  std::vector<std::string> strategies;  // catalogue names
  bool peers = false;
  std::vector<SubjectFacts> subjects;  // --subject, measured through the subject ABI
  std::vector<std::size_t> pending;
  std::vector<std::size_t> threads{2};  // the mt workloads, one cell per entry
  std::size_t rounds = 3;               // interleaved rounds of every cost cell
  CellSettings cell;                    // cell.threads is set per mt cell
  bool slack_1ns = false;

  // contended_threads: the thread count of the CAS-contended baseline: the largest
  // of `threads`, at least 2 (one thread would measure an uncontended CAS).
  std::size_t contended_threads() const;
};

// run_compare: measures everything `o` asks for. `progress` gets a short status
// line before each cell (may be empty).
CompareResults run_compare(const CompareOptions& o,
                           const std::function<void(const std::string&)>& progress);

// compare_result_cells: the table's header row, then one row of cells per result
// row, as the text table (compare_results_table) and the HTML table (html.h) show it.
// SPREAD is the largest over the smallest ns/op of a cost row's rounds.
std::vector<std::vector<std::string>> compare_result_cells(const CompareResults& r);
// result_cell_is_text: whether column `column` of those cells is text (left-aligned)
// rather than a number.
bool result_cell_is_text(std::size_t column);
std::string compare_results_table(const CompareOptions& o, const CompareResults& r);
nlohmann::ordered_json compare_results_json(const CompareOptions& o, const CompareResults& r);

}  // namespace tlab::tool::compare
