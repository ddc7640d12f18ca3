// tlab/tool/types/oracle.h: the oracles: each class of failure a case counts, the
// promise it judges, and whether a scenario may bound it.
//
// An oracle counts one class of failure: an engine driver reports each instance it
// observes (CaseContext::violation(Oracle, sentence)), and the parent judges the
// counts once (oracles/oracles.h, judge()). Only oracles whose promise the case's
// subject makes are judged (types/promise.h); the report lists the promises judged.
//
// clang-format off
//   | oracle              | counts                                                   | promise          | bound key        |
//   |---------------------|----------------------------------------------------------|------------------|------------------|
//   | double_resume       | a waiter resumed, or a one-shot timer ran, twice          | exactly_once     | expect.<name>    |
//   | lost_wakeup         | a parked waiter nobody resumed past its deadline + grace  | delivery         | expect.<name>    |
//   | undeserved_timeout  | a timed wait timed out though what it waited for was     | no_spurious_     | expect.<name>    |
//   |                     | available for at least a grace (wake latency) of its     | timeout          |                  |
//   |                     | window (oracles/availability_ledger.h)                   |                  |                  |
//   | fired_after_cancel  | a timer ran after a cancel that reported success          | accurate_cancel  | expect.<name>    |
//   | early_fire          | a timer ran, or a wait expired, before its deadline       | never_early      | expect.<name>    |
//   | late_fire           | a loop subject's timer ran after a poll at or after its   | delivery         | expect.<name>    |
//   |                     | deadline + the allowed lateness had passed it over        |                  |                  |
//   | lost_timer          | a timer due before the drain horizon neither ran nor was  | delivery         | expect.<name>    |
//   |                     | cancelled; an idle probe (subjects) never ran             |                  |                  |
//   | wrong_result        | CANCELED reported though no canceller won (or the reverse)| accurate_cancel  | expect.<name>    |
//   | wait_group_negative | the wait group's counter went below zero                  | counter_floor    | expect.<name>    |
//   | mutual_exclusion    | two holders of the timed mutex at once                    | mutual_exclusion | expect.<name>    |
//   | task_exceptions     | a thrown task exception not counted, or a dead timer      | contains_errors  | expect.<name>    |
//   |                     | thread                                                    |                  |                  |
//   | conservation        | armed != fired + cancelled + pending                      | pending_count    | expect.<name>    |
//   | stop_conservation   | a worker stop whose timers (those scheduled by work       | delivery         | expect.<name>    |
//   |                     | posted to it right before the stop) did not each end     |                  |                  |
//   |                     | exactly once: fired, cancelled, or returned by shutdown   |                  |                  |
//   | same_pass_fire      | a timer armed from inside a callback fired in the poll    | next_pass        | expect.<name>    |
//   |                     | that armed it                                             |                  |                  |
//   | starvation          | one poll ran a chain of callbacks re-armed within it past | delivery         | expect.<name>    |
//   |                     | the bound (tlab stopped feeding it)                       |                  |                  |
//   | fifo_order          | two equal-deadline timers of one thread ran out of order  | fifo_ties        | none (0)         |
//   | sanitizer           | a ThreadSanitizer report                                  | thread_safe      | none (0)         |
//   | crash               | the case's process died before reporting, or an exec      | (every subject)  | none (0)         |
//   |                     | subject's process before shutdown                         |                  |                  |
//   | protocol_error      | an exec subject broke docs/protocol.md (a line that is    | (every subject)  | none (0)         |
//   |                     | not a message, an answer nobody asked for, ...)           |                  |                  |
// clang-format on
//
// To add an oracle: an enumerator and one row of kOracleInfo (in enum order,
// static_assert'ed); a boundable one also needs its key in scenarios/schema.json
// and scenarios/README.md (tests/unit/scenario_test.cc checks both).
//
// A value of types/ (tool/LAYERS): a scenario's expectations are indexed by it
// (expectations.h), and the runner and the judge both name oracles, so it sits
// below all of them.
//
// Cost: oracle_from_name scans the 19 rows. Ground rules: constant tables.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "types/promise.h"

namespace tlab::tool {

enum class Oracle : std::uint8_t {
  kDoubleResume,
  kLostWakeup,
  kUndeservedTimeout,
  kFiredAfterCancel,
  kEarlyFire,
  kLateFire,
  kLostTimer,
  kWrongResult,
  kWaitGroupNegative,
  kMutualExclusion,
  kTaskExceptions,
  kConservation,
  kStopConservation,
  kSamePassFire,
  kStarvation,
  kFifoOrder,
  kSanitizer,
  kCrash,
  kProtocolError,
  kCount
};
inline constexpr std::size_t kOracleCount = static_cast<std::size_t>(Oracle::kCount);

struct OracleInfo {
  Oracle id;
  std::string_view name;           // the violation key in reports, and expect.<name> if boundable
  std::string_view counts;         // one phrase: what one violation is
  std::optional<Promise> promise;  // judged only when the subject makes it; nullopt: always
  bool boundable;  // a scenario may allow some (expect.<name>, expect.at_least.<name>)
};

inline constexpr std::array<OracleInfo, kOracleCount> kOracleInfo{{
    {Oracle::kDoubleResume, "double_resume", "a waiter resumed, or a one-shot timer ran, twice",
     Promise::kExactlyOnce, true},
    {Oracle::kLostWakeup, "lost_wakeup", "a parked waiter nobody resumed", Promise::kDelivery,
     true},
    {Oracle::kUndeservedTimeout, "undeserved_timeout",
     "a timed wait timed out while what it waited for was available (beyond a grace)",
     Promise::kNoSpuriousTimeout, true},
    {Oracle::kFiredAfterCancel, "fired_after_cancel",
     "a timer ran after a cancel that reported success", Promise::kAccurateCancel, true},
    {Oracle::kEarlyFire, "early_fire", "a timer ran before its deadline", Promise::kNeverEarly,
     true},
    {Oracle::kLateFire, "late_fire",
     "a timer ran after a poll at or after its deadline + the allowed lateness passed it over",
     Promise::kDelivery, true},
    {Oracle::kLostTimer, "lost_timer", "a timer neither ran nor was cancelled by the end",
     Promise::kDelivery, true},
    {Oracle::kWrongResult, "wrong_result", "CANCELED reported for an expiry, or the reverse",
     Promise::kAccurateCancel, true},
    {Oracle::kWaitGroupNegative, "wait_group_negative", "the wait-group counter went below zero",
     Promise::kCounterFloor, true},
    {Oracle::kMutualExclusion, "mutual_exclusion", "two holders of the timed mutex at once",
     Promise::kMutualExclusion, true},
    {Oracle::kTaskExceptions, "task_exceptions",
     "a task exception that was not counted and contained", Promise::kContainsErrors, true},
    {Oracle::kConservation, "conservation", "armed != fired + cancelled + pending",
     Promise::kPendingCount, true},
    {Oracle::kStopConservation, "stop_conservation",
     "a worker stop after which its timers did not each end exactly once: fired, cancelled, "
     "or returned by shutdown",
     Promise::kDelivery, true},
    {Oracle::kSamePassFire, "same_pass_fire",
     "a timer armed from inside a callback fired in the poll that armed it", Promise::kNextPass,
     true},
    {Oracle::kStarvation, "starvation",
     "one poll ran a chain of callbacks re-armed within it past the bound", Promise::kDelivery,
     true},
    {Oracle::kFifoOrder, "fifo_order", "two equal-deadline timers of one thread ran out of order",
     Promise::kFifoTies, false},
    {Oracle::kSanitizer, "sanitizer", "a ThreadSanitizer report", Promise::kThreadSafe, false},
    {Oracle::kCrash, "crash", "the case's process died before reporting", std::nullopt, false},
    {Oracle::kProtocolError, "protocol_error",
     "an exec subject broke the protocol (docs/protocol.md)", std::nullopt, false},
}};

constexpr bool oracle_table_in_order() {
  for (std::size_t i = 0; i < kOracleCount; ++i) {
    if (static_cast<std::size_t>(kOracleInfo[i].id) != i) return false;
  }
  return true;
}
static_assert(oracle_table_in_order(), "kOracleInfo rows must follow the Oracle enum order");

constexpr std::string_view name_of(Oracle o) {
  return kOracleInfo[static_cast<std::size_t>(o)].name;
}
constexpr const OracleInfo& info_of(Oracle o) { return kOracleInfo[static_cast<std::size_t>(o)]; }
// oracle_from_name: the oracle whose report key is `name`, or nullopt.
constexpr std::optional<Oracle> oracle_from_name(std::string_view name) {
  for (const OracleInfo& row : kOracleInfo) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

}  // namespace tlab::tool
