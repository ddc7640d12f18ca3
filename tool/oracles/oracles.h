// tlab/tool/oracles/oracles.h: the oracles, their bounds, and the one place a
// case's verdict is decided.
//
// An oracle counts one class of failure. The case's child process measures (an
// engine driver calls CaseContext::violation(Oracle, sentence) as it observes
// each instance, and records latency histograms); the parent judges, once, in
// judge() below: each count against the scenario's bound, each latency bound
// against its histogram, each `expect.at_least` requirement, and any sanitizer
// report. Only oracles whose promise the case's subject makes are judged
// (types/promise.h); the report lists the promises judged.
//
// clang-format off
//   | oracle              | counts                                                   | promise          | bound key        |
//   |---------------------|----------------------------------------------------------|------------------|------------------|
//   | double_resume       | a waiter resumed, or a one-shot timer ran, twice          | exactly_once     | expect.<name>    |
//   | lost_wakeup         | a parked waiter nobody resumed past its deadline + grace  | delivery         | expect.<name>    |
//   | fired_after_cancel  | a timer ran after a cancel that reported success          | accurate_cancel  | expect.<name>    |
//   | early_fire          | a timer ran, or a wait expired, before its deadline       | never_early      | expect.<name>    |
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
//   | fifo_order          | two equal-deadline timers of one thread ran out of order  | fifo_ties        | none (0)         |
//   | sanitizer           | a ThreadSanitizer report                                  | thread_safe      | none (0)         |
//   | crash               | the case's process died before reporting, or an exec      | (every subject)  | none (0)         |
//   |                     | subject's process before shutdown                         |                  |                  |
//   | protocol_error      | an exec subject broke docs/protocol.md (a line that is    | (every subject)  | none (0)         |
//   |                     | not a message, an answer nobody asked for, ...)           |                  |                  |
// clang-format on
//
// Besides the oracles, judge() adds two kinds of finding, both always fatal:
//   latency.<histogram>   a latency bound (expect.fire_lateness_us, expect.cancel_to_resume_us)
//                         broken by that histogram's percentile
//   at_least.<oracle>     fewer violations than expect.at_least requires
//
// To add an oracle: an enumerator and one row of kOracleInfo (in enum order,
// static_assert'ed); a boundable one also needs its key in scenarios/schema.json
// and scenarios/README.md (tests/unit/scenario_test.cc checks both).
//
// Cost: judge() is O(violations + oracles + percentile walks). Ground rules:
// constant tables; judge() is a pure function of its arguments.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "types/promise.h"

namespace tlab::tool {

struct CaseResult;

enum class Oracle : std::uint8_t {
  kDoubleResume,
  kLostWakeup,
  kFiredAfterCancel,
  kEarlyFire,
  kLostTimer,
  kWrongResult,
  kWaitGroupNegative,
  kMutualExclusion,
  kTaskExceptions,
  kConservation,
  kStopConservation,
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
    {Oracle::kFiredAfterCancel, "fired_after_cancel",
     "a timer ran after a cancel that reported success", Promise::kAccurateCancel, true},
    {Oracle::kEarlyFire, "early_fire", "a timer ran before its deadline", Promise::kNeverEarly,
     true},
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
std::optional<Oracle> oracle_from_name(std::string_view name);

// Upper bounds on a latency histogram, in microseconds; unset means unbounded.
struct LatencyBound {
  std::optional<std::int64_t> p50_max, p90_max, p99_max, p999_max, max;
};

// What must hold (oracles/oracles.h judges it). Indexed by Oracle; only boundable
// oracles are read from a file, the others stay 0.
struct Expectations {
  std::array<std::uint64_t, kOracleCount> max_violations{};  // all 0 by default
  // expect.at_least: violations that MUST occur (all 0 by default). For scenarios
  // that demonstrate a predicted failure of the real code (aba_wraparound_narrow:
  // the RFC's wraparound at 3 bits); the case fails if fewer are seen.
  std::array<std::uint64_t, kOracleCount> min_violations{};
  LatencyBound fire_lateness_us;
  LatencyBound cancel_to_resume_us;
};

// The latency histograms a scenario may bound (expect.<key>), by histogram name.
struct LatencyBoundInfo {
  std::string_view histogram;  // "fire_lateness": the report's latency key
  std::string_view key;        // "fire_lateness_us": the key under expect
};
inline constexpr std::array<LatencyBoundInfo, 2> kLatencyBoundInfo{{
    {"fire_lateness", "fire_lateness_us"},
    {"cancel_to_resume", "cancel_to_resume_us"},
}};

// over_bound: whether `count` violations under report key `key` exceed what
// `expect` allows (expect.<oracle> for a boundable oracle; 0 for everything else).
// The child's early stop of a mutant case and judge() both decide with this.
bool over_bound(const Expectations& expect, std::string_view key, std::uint64_t count);

// judged: whether a finding under report key `key` (an oracle's name, possibly
// after "at_least."; latency.* and any other key are always judged) counts for a
// subject promising `promised`.
bool judged(std::string_view key, PromiseSet promised);

// judge: the parent's one decision over a case's measurements. Adds the
// latency.* and at_least.* findings and the sanitizer record to `r`, then sets
// r.verdict (kFail if any judged finding is over its bound, else kPass), unless
// `forced` (the child or the parent already decided timeout/error/interrupted,
// or the child crashed), in which case the verdict is left as it is. Findings
// whose oracle's promise is not in `promised` are kept in the report but do not
// fail the case.
void judge(const Expectations& expect, PromiseSet promised, CaseResult& r, bool forced);

}  // namespace tlab::tool
