// tlab/tool/report/report_read.h: a report file read back into a Report (report.h),
// the inverse of Report::to_json, for `tlab merge`.
//
// The file is validated against the report schema first (report_schema.json), so
// every field the Report has is present and typed; what the schema cannot say
// (a latency histogram without its exact buckets, a verdict spelled wrong) is an
// error naming the file and the JSON pointer. Reports of older tlab versions that
// validate (no shard, no plan_index) load as they are. Fields Report does not
// model are not read: `compare` (compare's own document) and the derived summary,
// except summary.planned, which Report::planned stores.
//
// Cost: O(file size). Ground rules: CLI thread only.
#pragma once

#include <optional>
#include <string>

#include "base/json_input.h"
#include "report/report.h"

namespace tlab::tool {

// ReportFile: a report as read: the Report and whether the file says "complete"
// (false: written while its run was still going, by a run that was then killed).
struct ReportFile {
  std::string path;
  Report report;
  bool complete = true;
};

// read_report: the report in `path`, or nullopt with errors naming the file and
// JSON pointer (unreadable, not JSON, not a report, a histogram that is a summary).
std::optional<ReportFile> read_report(const std::string& path, InputErrors& errors);

}  // namespace tlab::tool
