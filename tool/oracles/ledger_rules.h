// tlab/tool/oracles/ledger_rules.h: the catalogue of the rules a TimerLedger
// (timer_ledger.h) judges, each with the oracle its findings count under, and the
// set of rules one ledger judges.
//
// To add a rule: an enumerator, one row of kLedgerRuleInfo (in enum order,
// static_assert'ed), one row of the table below, its sentence where its event is
// judged (timer_ledger.cc, timer_ledger_periodic.cc or timer_ledger_checks.cc),
// and a test in tests/unit/timer_ledger_test.cc that shows it firing on a minimal
// sequence and quiet on the correct one.
//
// clang-format off
// The rules (kLedgerRuleInfo; "now" is the event's instant on the judged clock):
//   | rule                  | oracle             | judged at            | wrong when                                        |
//   |-----------------------|--------------------|----------------------|---------------------------------------------------|
//   | early                 | early_fire         | a first fire         | now < scheduled + delay (saturated)               |
//   | late                  | late_fire          | a first fire (loop   | an earlier poll, begun after armed(), had a now   |
//   |                       |                    | subjects)            | >= due + late_allowance (timer_ledger.h: Lateness)|
//   | same_pass             | same_pass_fire     | a first fire         | the timer was scheduled from a callback of the    |
//   |                       |                    |                      | poll now running (LedgerSchedule::pass)           |
//   | starvation            | starvation         | a first fire         | it is the starvation_after-th link of one chain   |
//   |                       |                    |                      | fired within the running poll, each link scheduled|
//   |                       |                    |                      | by the callback of the one before (LedgerSchedule |
//   |                       |                    |                      | ::chain; once per poll; LedgerFired::starving)    |
//   | fired_twice           | double_resume      | a fire               | the timer had fired (or settled before the ring)  |
//   | overlapping_run       | double_resume      | a periodic run       | the series' previous fired() had not returned     |
//   |                       |                    |                      | (run_ended)                                       |
//   | never_scheduled       | double_resume      | a fire               | no schedule() was given that cookie               |
//   | after_destroy         | fired_after_cancel | a fire               | destroyed() had been told                         |
//   | fired_after_prevented | fired_after_cancel | a fire, a PREVENTED  | it fired after the PREVENTED call had returned    |
//   | prevented_fired       | wrong_result       | a fire, a PREVENTED  | it fired before or during the PREVENTED call      |
//   | fired_refused         | wrong_result       | a fire               | its schedule() had been refused                   |
//   | prevented_twice       | wrong_result       | a PREVENTED          | an earlier cancel had prevented it (or it settled |
//   |                       |                    |                      | before the ring)                                  |
//   | prevented_vs_too_late | wrong_result       | PREVENTED, TOO_LATE  | a TOO_LATE call for the unfired timer returned    |
//   |                       |                    |                      | before a PREVENTED call began (either order)      |
//   | too_late_unfired      | wrong_result       | overdue() (sequen-   | a cancel said TOO_LATE and the timer had not      |
//   |                       |                    | tial: the TOO_LATE)  | fired                                             |
//   | lost                  | lost_timer         | overdue(), lost()    | live, not doubtful, due by the horizon            |
//   | fifo_later_first      | fifo_order         | a first fire         | a tie its owner scheduled later fired first       |
//   | fifo_earlier_armed    | fifo_order         | a fire (sequential)  | a tie its owner scheduled earlier is live and not |
//   |                       |                    |                      | doubtful                                          |
//   | pending_count         | conservation       | pending_count()      | count outside [open - doubtful, open before]      |
//   | pending_list          | conservation       | pending_list()       | names a timer not live, or omits a live one that  |
//   |                       |                    |                      | no cancel said UNKNOWN of                         |
// clang-format on
//
// Cost: everything here is constexpr; LedgerRules is a 32-bit mask.
// Ground rules and memory ordering: immutable values, safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oracles/oracles.h"

namespace tlab::tool {

enum class LedgerRule : std::uint8_t {
  kEarly,
  kLate,
  kSamePass,
  kStarvation,
  kFiredTwice,
  kOverlappingRun,
  kNeverScheduled,
  kAfterDestroy,
  kFiredAfterPrevented,
  kPreventedFired,
  kFiredRefused,
  kPreventedTwice,
  kPreventedVsTooLate,
  kTooLateUnfired,
  kLost,
  kFifoLaterFirst,
  kFifoEarlierArmed,
  kPendingCount,
  kPendingList,
  kCount
};
inline constexpr std::size_t kLedgerRuleCount = static_cast<std::size_t>(LedgerRule::kCount);

struct LedgerRuleInfo {
  LedgerRule id;
  std::string_view name;
  Oracle oracle;  // its findings' oracle; kOracleInfo names the promise judged
};

inline constexpr std::array<LedgerRuleInfo, kLedgerRuleCount> kLedgerRuleInfo{{
    {LedgerRule::kEarly, "early", Oracle::kEarlyFire},
    {LedgerRule::kLate, "late", Oracle::kLateFire},
    {LedgerRule::kSamePass, "same_pass", Oracle::kSamePassFire},
    {LedgerRule::kStarvation, "starvation", Oracle::kStarvation},
    {LedgerRule::kFiredTwice, "fired_twice", Oracle::kDoubleResume},
    {LedgerRule::kOverlappingRun, "overlapping_run", Oracle::kDoubleResume},
    {LedgerRule::kNeverScheduled, "never_scheduled", Oracle::kDoubleResume},
    {LedgerRule::kAfterDestroy, "after_destroy", Oracle::kFiredAfterCancel},
    {LedgerRule::kFiredAfterPrevented, "fired_after_prevented", Oracle::kFiredAfterCancel},
    {LedgerRule::kPreventedFired, "prevented_fired", Oracle::kWrongResult},
    {LedgerRule::kFiredRefused, "fired_refused", Oracle::kWrongResult},
    {LedgerRule::kPreventedTwice, "prevented_twice", Oracle::kWrongResult},
    {LedgerRule::kPreventedVsTooLate, "prevented_vs_too_late", Oracle::kWrongResult},
    {LedgerRule::kTooLateUnfired, "too_late_unfired", Oracle::kWrongResult},
    {LedgerRule::kLost, "lost", Oracle::kLostTimer},
    {LedgerRule::kFifoLaterFirst, "fifo_later_first", Oracle::kFifoOrder},
    {LedgerRule::kFifoEarlierArmed, "fifo_earlier_armed", Oracle::kFifoOrder},
    {LedgerRule::kPendingCount, "pending_count", Oracle::kConservation},
    {LedgerRule::kPendingList, "pending_list", Oracle::kConservation},
}};

constexpr bool ledger_rule_table_in_order() {
  for (std::size_t i = 0; i < kLedgerRuleCount; ++i) {
    if (static_cast<std::size_t>(kLedgerRuleInfo[i].id) != i) return false;
  }
  return true;
}
static_assert(ledger_rule_table_in_order(),
              "kLedgerRuleInfo rows must follow the LedgerRule order");

constexpr const LedgerRuleInfo& info_of(LedgerRule r) {
  return kLedgerRuleInfo[static_cast<std::size_t>(r)];
}

// LedgerRules: the rules one ledger judges (a set, built with with()/without()).
class LedgerRules {
 public:
  static constexpr LedgerRules all() {
    return LedgerRules((std::uint32_t{1} << kLedgerRuleCount) - 1);
  }
  static constexpr LedgerRules none() { return LedgerRules(0); }
  constexpr bool has(LedgerRule r) const { return (bits_ & bit(r)) != 0; }
  constexpr LedgerRules with(LedgerRule r) const { return LedgerRules(bits_ | bit(r)); }
  constexpr LedgerRules without(LedgerRule r) const { return LedgerRules(bits_ & ~bit(r)); }
  constexpr bool operator==(const LedgerRules&) const = default;

 private:
  constexpr explicit LedgerRules(std::uint32_t b) : bits_(b) {}
  static constexpr std::uint32_t bit(LedgerRule r) {
    return std::uint32_t{1} << static_cast<unsigned>(r);
  }
  std::uint32_t bits_;
};
static_assert(kLedgerRuleCount <= 32, "LedgerRules is a 32-bit mask");

}  // namespace tlab::tool
