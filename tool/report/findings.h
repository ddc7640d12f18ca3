// tlab/tool/report/findings.h: the failing cases of a report as findings: what the
// CI outputs (SARIF, GitHub annotations and step summary, the HTML report) say
// about each, so that they all name the same rule, file, line and replay command.
//
// A finding is a case whose outcome (report.h, Outcome) fails the gate: kViolation,
// kSurvived or kError. Its rule:
// clang-format off
//   | case                                        | rule                                    |
//   |---------------------------------------------|-----------------------------------------|
//   | violation of oracle X (first judged key)    | X (oracles.h kOracleInfo)               |
//   | latency.<histogram> over its bound          | latency                                 |
//   | at_least.<oracle> unmet                     | at_least                                |
//   | a sanitizer report and no violation key     | sanitizer (an oracle)                   |
//   | a Relacy model found a failure              | model_failure                           |
//   | a mutant that no case of its pair caught    | mutant_survived                         |
//   | error, or a clean case's timeout            | error, timeout                          |
// clang-format on
// finding_rules() lists them all: the oracle catalogue's rows, then kExtraRules.
//
// Location: the scenario file, relative to the repository root, with '/'. The
// built-in suite is embedded at build time from scenarios/<file>, so "builtin:<file>"
// is "scenarios/<file>" (relative to tlab's own source tree). A scenario file on disk
// is made absolute and taken relative to the nearest ancestor directory holding a
// `.git` (a directory, or a worktree's file), as `git rev-parse --show-toplevel`
// would; outside any repository the path stays as the report recorded it. The line
// is that of the mutant's entry in `catches` for a mutant case, else the line of the
// `"expect"` key, else of `"name"`; 0 when none is found (or the file is gone).
//
// Unpromised findings (unpromised_findings): a passed case can still have seen an
// oracle's failure class that its subject does not promise (oracle.h, judged()):
// a peer's documented behaviour, or a promise a subject chose not to make. They
// fail nothing (`--fail-on` turns chosen ones into failures), but every output
// shows them: SARIF as level "note", GitHub as `::notice`, JUnit in the passed
// case's <system-out>, the HTML report in its own section. One per (case, oracle)
// with a count, in case order, then oracle name order:
//   rule     the oracle
//   message  "<oracle> <count> (not promised by <strategy>): <first example>"
//   count    the oracle's count in that case
//
// Replay: `tlab replay <report> --case <id>` (the report named by --report, or
// REPORT.json when none was written); a model case's own command line; a property
// run's property_command.
//
// Cost: O(cases) plus one read of each scenario file that has a finding.
// Ground rules: pure functions of the report and the file system.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace tlab::tool {

struct FindingRule {
  std::string_view id;
  std::string_view description;
};

// finding_rules: every rule a finding can name, the oracles first (in catalogue order).
std::vector<FindingRule> finding_rules();

struct Finding {
  const CaseRecord* record = nullptr;  // points into the Report
  Outcome outcome = Outcome::kViolation;
  std::string rule;         // a FindingRule id
  std::string message;      // the explanation (console.h case_explanation), one line
  std::string file;         // relative to the repository root; "" when unknown
  int line = 0;             // 1-based; 0 when unknown
  std::string replay;       // the command line that re-runs the case
  bool promised = true;     // false: a passed case's unpromised finding (a note)
  std::uint64_t count = 0;  // unpromised only: the oracle's count in the case
};

// findings: one per failing case of `report`, in case order. `report_path` is where
// the JSON report was written ("" when it was not).
std::vector<Finding> findings(const Report& report, const std::string& report_path);

// unpromised_findings: the notes above, for every passed case of `report`.
std::vector<Finding> unpromised_findings(const Report& report, const std::string& report_path);

// repo_relative: `path` relative to the root of the git repository that holds it
// (the rule above), or `path` itself outside any repository.
std::string repo_relative(const std::string& path);

// line_of: the 1-based line of the first occurrence of `needle` in `text`; 0 if none.
int line_of(std::string_view text, std::string_view needle);

}  // namespace tlab::tool
