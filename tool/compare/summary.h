// tlab/tool/compare/summary.h: what one `tlab compare` run concludes, as two
// tables computed from its rows (run.h): how each subject scales with threads, and
// how our best subject stands against the fastest peer in each cost cell.
//
//   | table        | one row per                        | value                          |
//   |--------------|------------------------------------|--------------------------------|
//   | scaling      | mt workload x subject x pending x  | ops/s (wall), and ops/s over   |
//   |              | threads, when 2 or more thread     | the same subject's ops/s at    |
//   |              | counts were measured               | the fewest threads measured    |
//   | versus peers | cost workload x pending x threads  | our least-cost subject and the |
//   |              | with both a strategy/engine and a  | least-cost peer; factor = peer |
//   |              | peer row                           | cost / ours (> 1: ours faster) |
//
// Cost is CPU ns/op for the single-thread workloads and wall ns/op (1 / ops/s) for
// the mt workloads (mt_schedule_cancel, mt_churn), whose point is throughput
// across threads; both are the
// medians of the run's interleaved rounds, so these ratios are ratios of medians.
// Goals of the form "mt_schedule_cancel at 1M, 2 threads: ours >= 2x the fastest
// peer" read straight off the versus row's factor, and "ops/s on nproc threads >=
// 1.6x one thread" off the scaling row's.
//
// Cost: O(rows^2) over a few hundred rows. Ground rules: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/results.h"

namespace tlab::tool::compare {

struct ScalingRow {
  Workload workload = Workload::kMtScheduleCancel;
  std::string subject;
  bool peer = false;
  std::size_t pending = 0;
  std::size_t threads = 0;
  double ops_per_s = 0;
  std::size_t base_threads = 0;  // the fewest threads this subject ran at this size
  double vs_base = 0;            // ops_per_s / ops/s at base_threads
};

struct VersusRow {
  Workload workload = Workload::kInsertCancel;
  std::size_t pending = 0;
  std::size_t threads = 0;  // mt workloads only
  std::string measure;      // "cpu_ns_per_op" or "wall_ns_per_op"
  std::string ours;
  double ours_ns = 0;
  std::string peer;
  double peer_ns = 0;
  double factor = 0;  // peer_ns / ours_ns
};

std::vector<ScalingRow> scaling_rows(const CompareResults& r);
std::vector<VersusRow> versus_rows(const CompareResults& r);

// summary_text: both tables, aligned, each with a one-line heading; empty tables
// are left out.
std::string summary_text(const CompareResults& r);
// summary_json: {"scaling": [...], "versus_peers": [...]} (report_schema.json).
nlohmann::ordered_json summary_json(const CompareResults& r);
// summary_html: table#scaling and table#versus (when not empty), with headings.
std::string summary_html(const CompareResults& r);

}  // namespace tlab::tool::compare
