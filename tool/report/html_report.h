// tlab/tool/report/html_report.h: the report as one self-contained HTML page
// (`--html F` on run, check, mutants and merge; jcstress users expect one).
//
// One file: inline CSS and inline SVG (report/svg_chart.h), no script, nothing
// fetched, so it opens offline and from a CI artifact. Sections, each an element with
// a fixed id (tests/e2e/browser_test.sh looks for them):
// clang-format off
//   | id            | what                                                               |
//   |---------------|--------------------------------------------------------------------|
//   | summary       | command, counts per verdict, mutants caught and survived, the      |
//   |               | environment                                                        |
//   | cases         | <table>: one row per case (class "case outcome-<outcome>"): id,    |
//   |               | strategy, mutant, seed, verdict, time, the explanation             |
//   |               | (console.h case_explanation); a failing row links to its replay    |
//   |               | command                                                            |
//   | oracles       | <table>: per oracle (every catalogue row) and latency/at_least key:|
//   |               | cases that saw it, violations in all, cases it failed              |
//   | latency       | per histogram name, the cases' exact histograms merged per         |
//   |               | strategy: a CDF (svg.cdf, one line per strategy) and the merged    |
//   |               | distribution (svg.histogram, log bins)                             |
//   | mutant-pairs  | mutant cases only: per (scenario, mutant) pair, the cases and      |
//   |               | trials that caught it and the detection rate                       |
//   | kill-matrix   | report.kill_matrix only (mutants, check --models): per mutant and  |
//   |               | layer the best check, detections/trials (the rate) and the time    |
//   | replay        | per failing case (findings.h) an anchor replay-<n> with its rule,  |
//   |               | explanation and replay command                                     |
//   | unpromised    | per unpromised finding of a passed case (findings.h): case,        |
//   |               | oracle, count, explanation, replay command; counted in summary     |
//   |               | (id unpromised-count)                                              |
// clang-format on
// All text from the report is XML-escaped.
//
// Cost: O(cases + histogram buckets). Ground rules: pure function.
#pragma once

#include <string>
#include <vector>

#include "report/findings.h"

namespace tlab::tool {

// html_report: the page for `report`, whose findings are `found` and whose
// unpromised findings are `notes`.
std::string html_report(const Report& report, const std::vector<Finding>& found,
                        const std::vector<Finding>& notes = {});

}  // namespace tlab::tool
