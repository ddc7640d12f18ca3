// tlab/tool/types/case_result.h: what one case measured and how it was judged,
// and its one JSON form.
//
// The same type travels the whole way: the case's child process fills it and
// sends it to the parent as JSON (to_json), the parent reads it back (from_json)
// and judges it (oracles/oracles.h), and the report embeds the same JSON for each
// case (report/report.h). Histograms travel exactly (their buckets), so the parent
// and a later `tlab merge` see what the child recorded, not a summary of it.
//
// clang-format off
//   | field             | filled by                             | JSON                                      |
//   |-------------------|---------------------------------------|-------------------------------------------|
//   | verdict           | judge(), or forced                    | "verdict": "pass|fail|error|timeout|..."  |
//   | violations        | child oracles; judge() adds           | {key: {count, first_example}}             |
//   |                   |   latency.*, at_least.*, ...          |                                           |
//   | counters          | child                                 | {name: n}                                 |
//   | latency           | child (per-actor histograms)          | {name: histogram, exact}                  |
//   | sanitizer_reports | parent (the child's stderr)           | [text]                                    |
//   | subject, promises | parent (the case's subject)           | "subject", "promises_judged": [name]      |
//   | duration_s        | parent                                | number                                    |
//   | peak_rss_bytes    | child (getrusage when it reports)     | integer; absent when 0 (no child report)  |
//   | message           | child or parent                       | string                                    |
// clang-format on
//
// A value of types/ (tool/LAYERS): the runner fills it, the oracles judge it and
// the report embeds it, so it sits below all three.
//
// Cost: O(violations + counters + histogram buckets). Ground rules: a plain value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/histogram.h"
#include "types/promise.h"

namespace tlab::tool {

enum class Verdict : std::uint8_t { kPass, kFail, kError, kTimeout, kInterrupted };
std::string_view name_of(Verdict v);
std::optional<Verdict> verdict_from_name(std::string_view name);

struct ViolationRecord {
  std::uint64_t count = 0;
  std::string first_example;  // a human sentence naming the actor, timer and times
};

// kOffClockCounter: the counter a case's child sets when the scenario asks for
// tlab's virtual clock and the case ran on the real clock instead (a subject that
// cannot run on tlab's clock): judge() then measures its latency bounds but does
// not judge them, since a bound written for virtual time is a timing assertion on
// a real clock (the lateness rules of the ledger still judge every fire).
inline constexpr std::string_view kOffClockCounter = "virtual_scenario_on_real_clock";

struct CaseResult {
  Verdict verdict = Verdict::kError;
  // Keys are oracle names (oracles/oracles.h kOracleInfo), "latency.<histogram>"
  // for a broken latency bound, or "at_least.<oracle>" for an unmet requirement.
  std::map<std::string, ViolationRecord> violations;
  std::map<std::string, std::uint64_t> counters;  // armed, fired, cancelled, ...
  // fire_lateness, cancel_to_resume, schedule_cost, cancel_cost, ...
  std::map<std::string, Histogram> latency;
  std::vector<std::string> sanitizer_reports;
  // The subject the case ran on (subjects/subjects.h; empty for model runs) and
  // the promises it makes, i.e. the oracles that were judged.
  std::string subject;
  PromiseSet promises;
  double duration_s = 0.0;
  // The case child's peak resident set (getrusage ru_maxrss) when it reported; 0
  // when no child reported (model runs, a child that died). docs/design.md,
  // "Resources", gives the bound it must stay under.
  std::uint64_t peak_rss_bytes = 0;
  // error/timeout/interrupted: what happened, and for a timeout the state of every
  // actor (for example "waiter#3: parked on token 0x2a since 4.1 s").
  std::string message;

  // CaseResult::to_json: the fields above, in the report's key order.
  nlohmann::ordered_json to_json() const;
  // CaseResult::from_json: the inverse of to_json. Throws nlohmann::json::exception
  // on a malformed document (the caller decides what a bad child payload means).
  static CaseResult from_json(const nlohmann::json& j);
};

}  // namespace tlab::tool
