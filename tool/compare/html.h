// tlab/tool/compare/html.h: the self-contained HTML page of `tlab compare --html`.
//
// One file, no scripts, no external resources: it opens in any browser offline.
// It holds, as inline SVG: per cost workload, ns/op against pending timers on
// log-log axes (one line per strategy and peer; peers dashed); the lateness CDF
// of every subject with clock_nanosleep's as the reference; the cancel-to-resume
// CDF with the condition-variable wake as the reference. Then the full table with
// ratios, the baselines, how each subject is driven, and the environment.
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
