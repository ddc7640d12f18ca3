// tlab/tool/types/promise.h: what a subject promises, as a set the oracles
// can be matched against.
//
// A subject (subjects/subjects.h) declares the promises it makes; each oracle
// (oracles/oracles.h) judges exactly one promise, or none (a crash is judged
// for every subject). A case judges the oracles whose promise its subject makes,
// and the report lists the promises judged, so "pass" always says against what.
//
//   | promise          | meaning                                                        |
//   |------------------|----------------------------------------------------------------|
//   | delivery         | every timer due before the end fires or is cancelled; every   |
//   |                  | parked waiter is resumed                                      |
//   | exactly_once     | a timer fires, a waiter resumes, at most once per arming      |
//   | never_early      | nothing fires before its deadline on the subject's clock      |
//   | accurate_cancel  | cancel reports success iff the timer will not fire, and the   |
//   |                  | result a waiter sees names the side that really won           |
//   | fifo_ties        | timers with equal deadlines fire in the order they were armed |
//   | pending_count    | pending() equals armed - fired - cancelled                    |
//   | contains_errors  | a callback that throws does not stop the facility             |
//   | thread_safe      | schedule and cancel may be called from any thread (judged by  |
//   |                  | ThreadSanitizer in a TSan build)                              |
//   | mutual_exclusion | a timed lock has at most one holder                           |
//   | counter_floor    | a timed wait group's counter never goes below zero            |
//   | no_spurious_     | a timed wait returns "timed out" only if what it waits for    |
//   | timeout          | (a permit, the lock, the group's zero, the awaited event) was |
//   |                  | not available for a grace's length of its wait               |
//   | virtual_time     | a capability, not a check: the subject can run on a virtual   |
//   |                  | clock, so a case replays exactly                              |
//   | next_pass        | a timer armed from inside a callback never fires in the pass  |
//   |                  | (poll) that armed it                                          |
//   | reentrant        | a capability, not a check: callbacks may call the subject     |
//   |                  | (tlab then performs the scenario's callback scripts)          |
//
// A value of types/ (tool/LAYERS): the oracles, case results and the subject table
// all read it, so it sits below all three.
//
// Cost: a PromiseSet is one 16-bit mask. Ground rules: constants and values only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tlab::tool {

enum class Promise : std::uint8_t {
  kDelivery,
  kExactlyOnce,
  kNeverEarly,
  kAccurateCancel,
  kFifoTies,
  kPendingCount,
  kContainsErrors,
  kThreadSafe,
  kMutualExclusion,
  kCounterFloor,
  kNoSpuriousTimeout,
  kVirtualTime,
  kNextPass,
  kReentrant,
  kCount
};
inline constexpr std::size_t kPromiseCount = static_cast<std::size_t>(Promise::kCount);
inline constexpr std::array<std::string_view, kPromiseCount> kPromiseNames{
    "delivery",         "exactly_once",  "never_early",         "accurate_cancel",
    "fifo_ties",        "pending_count", "contains_errors",     "thread_safe",
    "mutual_exclusion", "counter_floor", "no_spurious_timeout", "virtual_time",
    "next_pass",        "reentrant"};
constexpr std::string_view name_of(Promise p) { return kPromiseNames[static_cast<std::size_t>(p)]; }

// PromiseSet: a set of promises, built with `|`.
class PromiseSet {
 public:
  constexpr PromiseSet() = default;
  constexpr PromiseSet(Promise p) : bits_(bit(p)) {}  // NOLINT: a promise is a one-element set

  constexpr bool has(Promise p) const { return (bits_ & bit(p)) != 0; }
  constexpr PromiseSet operator|(PromiseSet o) const { return from_bits(bits_ | o.bits_); }
  constexpr PromiseSet without(Promise p) const {
    return from_bits(static_cast<std::uint16_t>(bits_ & ~bit(p)));
  }
  constexpr bool operator==(const PromiseSet&) const = default;

  // PromiseSet::names: the members in enum order, comma-separated ("delivery, never_early").
  std::string names() const {
    std::string out;
    for (std::size_t i = 0; i < kPromiseCount; ++i) {
      if (!has(static_cast<Promise>(i))) continue;
      if (!out.empty()) out += ", ";
      out += kPromiseNames[i];
    }
    return out;
  }

 private:
  static constexpr std::uint16_t bit(Promise p) {
    return static_cast<std::uint16_t>(1u << static_cast<unsigned>(p));
  }
  static constexpr PromiseSet from_bits(std::uint16_t b) {
    PromiseSet s;
    s.bits_ = b;
    return s;
  }
  std::uint16_t bits_ = 0;
};
static_assert(kPromiseCount <= 16, "PromiseSet is a 16-bit mask");

constexpr PromiseSet operator|(Promise a, Promise b) { return PromiseSet(a) | PromiseSet(b); }

constexpr std::optional<Promise> promise_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kPromiseCount; ++i) {
    if (kPromiseNames[i] == name) return static_cast<Promise>(i);
  }
  return std::nullopt;
}

}  // namespace tlab::tool
