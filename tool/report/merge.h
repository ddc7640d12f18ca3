// tlab/tool/report/merge.h: `tlab merge`: the shard reports of one sharded run
// (plan/shard.h) joined into the report the unsharded run would have written.
//
// What may be merged: every file is a shard report ("shard" present) of one plan.
// Each rule below refuses with an error naming the file and JSON pointer (exit 2):
//   | rule                                   | pointer                          |
//   |----------------------------------------|----------------------------------|
//   | it is a shard report                   | /shard                           |
//   | it ran to the end (not interrupted, not | /interrupted, /complete         |
//   |   a file a killed run left behind)     |                                  |
//   | no --until-fail round (rounds differ   | /until_fail                      |
//   |   per shard: there is no one round)    |                                  |
//   | same command as the first file         | /command                         |
//   | same tlab version and git revision     | /environment/tlab_version, ...   |
//   | same shard total, plan and scenarios   | /shard/total, /shard/plan_digest,|
//   |   (digests of the whole plan's case    |   /shard/scenario_digest         |
//   |   keys and of the scenario documents)  |                                  |
//   | its scenario digest matches the        | /shard/scenario_digest           |
//   |   scenarios it embeds                  |                                  |
//   | no shard index twice                   | /shard/index                     |
//   | each case's plan_index is in the plan, | /cases/K/plan_index              |
//   |   and no two cases share one (mutants: |                                  |
//   |   no two files; a unit's cases share)  |                                  |
// Missing shards are refused too, after the rules above ("missing shards 2, 5 of
// 7"): a merged report must stand for the whole plan, or a CI gate that lost a
// shard would pass on what is left. Nothing is written then.
//
// The merge: cases are ordered by plan_index (the unsharded run's order) and lose
// it; scenarios are the first file's (equal in all, by digest); planned is the sum
// of the shards' (a check pair caught early is not owed in any of them); the
// environment is shard 0's. Case results travel as they were recorded (histograms
// exactly, case_result.h), so verdicts, counters, histograms, the summary and the
// exit code equal the unsharded run's whenever the cases themselves are
// deterministic (virtual-clock scenarios).
// `tlab mutants` shards (layers/layer_shard.h): their plan_index is the case's work
// unit, so cases come out grouped by unit (a unit's trials together, where the
// unsharded report has trial after trial). Their kill matrices are joined by the
// layer that owns the matrix (layers/layer_shard.h merge_kill_matrices), after
// merge_reports: a report section of a higher layer is that layer's to join.
//
// Cost: O(cases log cases). Ground rules: CLI thread only.
#pragma once

#include <optional>
#include <vector>

#include "base/json_input.h"
#include "report/report.h"
#include "report/report_read.h"

namespace tlab::tool {

// merge_reports: the merged report, or nullopt with the errors per the table.
// Requires: !files.empty(). The files are left as they were (a command's own
// section, as the kill matrix, is joined from them afterwards).
std::optional<Report> merge_reports(const std::vector<ReportFile>& files, InputErrors& errors);

}  // namespace tlab::tool
