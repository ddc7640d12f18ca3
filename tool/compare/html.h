// tlab/tool/compare/html.h: the self-contained HTML page of `tlab compare --html`.
//
// One file, no scripts, no external resources: it opens in any browser offline.
// It opens with "which strategy for which workload" (table#conclusion), computed
// from the rows: per cost workload the strategy (never a peer) with the least CPU
// ns/op at each pending count, consecutive counts joined into ranges, with its margin
// over the next strategy; per latency workload the least p99. Then, as inline SVG
// (report/svg_chart.h): per cost workload, ns/op against pending timers on log-log
// axes (one line per strategy and peer; peers dashed), the y axis broken where
// broken_axis_clip() says (sorted_list's cost at 10^5 pending would otherwise squash
// every other line into one decade); the lateness CDF of every subject with
// clock_nanosleep's as the reference; the cancel-to-resume CDF with the
// condition-variable wake as the reference. Then the scaling and versus-peers
// tables (summary.h: table#scaling, table#versus), then the full table (table#results, the
// cells of compare_result_cells), the baselines, how each subject is driven, and the
// environment.
//
// Cost: O(rows x 100) string work. Ground rules: pure function.
#pragma once

#include <string>

#include "compare/run.h"
#include "report/report.h"

namespace tlab::tool::compare {

std::string compare_results_html(const CompareOptions& o, const CompareResults& r,
                                 const Environment& env);

}  // namespace tlab::tool::compare
