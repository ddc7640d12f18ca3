// tlab/tool/compare/results.h: what one `tlab compare` run measured: a row per
// measured cell (ResultRow) and the run's baselines (CompareResults). run.h fills
// them; run.h's tables, html.h and summary.h read them.
//
// Cost: plain data. Ground rules: filled by run_compare on the compare thread, read
// afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/histogram.h"
#include "compare/subject.h"

namespace tlab::tool::compare {

struct ResultRow {
  Workload workload = Workload::kInsertCancel;
  std::string subject;
  bool peer = false;
  std::size_t pending = 0;  // cost workloads only
  std::size_t threads = 0;  // mt workloads only (is_mt)
  CostResult cost;          // cost workloads: the median of round_costs
  std::vector<CostResult> round_costs;  // cost workloads: one per round, in order
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

}  // namespace tlab::tool::compare
