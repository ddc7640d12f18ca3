// tlab/tool/report/github.h: what a GitHub Actions job shows of a report:
// `::error` workflow commands (annotations on the scenario file) for failing
// cases, `::notice` for the findings of passed cases that their subject does not
// promise (findings.h unpromised_findings), and a Markdown step summary of both.
//
// Active when GITHUB_ACTIONS is "true" (GitHub sets it in every job); finish()
// (cli/common.h) then prints one annotation per finding (findings.h) on stderr (the
// runner reads workflow commands from both streams; stdout stays the table or the
// --json document), and appends the summary to the file GITHUB_STEP_SUMMARY
// names, when it is set.
//
// Escaping follows the runner's workflow-command rules: in the message (data),
// '%' '\r' '\n' become %25 %0D %0A; in a property (file, title) also ':' and ','
// become %3A %2C.
//
// Annotations are capped too: GitHub shows at most 10 error annotations per step
// (and 50 per job), so a run with thousands of failing cases would print thousands
// of lines nobody sees; tlab prints the first kAnnotationCap and then one ::warning
// saying how many were left out and that the report has them all. Notices have the
// same limits and are capped the same way, separately.
//
// The summary is capped: GitHub refuses a step summary over 1 MiB, so what tlab
// appends plus what the file already holds stays under kStepSummaryCap; the last
// rows that do not fit give way to one line saying how many were left out.
//
// Cost: O(findings). Ground rules: CLI thread; the summary file is appended once.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "report/findings.h"

namespace tlab::tool {

// 1 MiB is GitHub's limit per step summary; 16 KiB under it leaves room for the
// truncation line and for whatever another step appended between our size check and
// our write.
inline constexpr std::size_t kStepSummaryCap = (std::size_t{1} << 20) - (std::size_t{16} << 10);

// kAnnotationCap: 50, GitHub's per-job limit of error annotations; more than the 10
// a step shows, so a job of several tlab steps still gets its full share.
inline constexpr std::size_t kAnnotationCap = 50;

// github_escape_data / github_escape_property: the workflow-command escapes above.
std::string github_escape_data(std::string_view s);
std::string github_escape_property(std::string_view s);

// github_annotations: one "::error file=F,line=L,title=T::message" line per finding,
// for the first `cap` findings; when there are more, one "::warning" line after them
// says how many were left out.
std::string github_annotations(const std::vector<Finding>& found,
                               std::size_t cap = kAnnotationCap);

// github_notices: one "::notice file=F,line=L,title=T::message" line per unpromised
// finding, for the first `cap`; when there are more, one more ::notice says how many
// were left out.
std::string github_notices(const std::vector<Finding>& notes, std::size_t cap = kAnnotationCap);

// step_summary: the Markdown summary (verdict counts, one table row per finding,
// then a table of the unpromised findings `notes`), at most `cap` bytes: rows that
// do not fit are replaced by a truncation line counting what was left out.
std::string step_summary(const Report& report, const std::vector<Finding>& found, std::size_t cap,
                         const std::vector<Finding>& notes = {});

// emit_github: when GITHUB_ACTIONS=true, writes the annotations and notices on `err`
// and appends the summary to $GITHUB_STEP_SUMMARY (capped with the file's current
// size counted). Throws std::system_error when the summary file cannot be written.
void emit_github(const Report& report, const std::vector<Finding>& found,
                 const std::vector<Finding>& notes, std::ostream& err);

}  // namespace tlab::tool
