// tlab/tool/oracles/availability_ledger.h: whether a timed wait's timeout was
// deserved, judged once for every timed wait tlab drives (the undeserved_timeout
// oracle, promise no_spurious_timeout).
//
// A lost wakeup in a timed wait does not hang: the waiter leaves through its
// timeout and reports "timed out", which every other oracle accepts. This ledger
// asks whether the thing waited for was there to be had. The driver tells it when
// the resource became available and unavailable, from events the driver itself
// drives (never from the subject's own account), and each wait's call and return;
// a wait that timed out is then judged against the availability history:
//
//   | resource (driver)            | capacity  | unit held from ... to ...                        |
//   |------------------------------|-----------|--------------------------------------------------|
//   | timed mutex (kMutex)         | 1         | lock_for returned true ... unlock() returned     |
//   | pool (kPool)                 | pool_size | checkout_for returned a lease ... its reset()    |
//   | ABI timed wait               | permits   | acquire_for said acquired ... release() returned |
//   | wait group (kWaitGroup)      | 1         | add(n) holds n ... each done() returned frees 1  |
//   | with_timeout (kCoroutine)    | (one      | the awaited sleep is available from its due time |
//   |                              | interval) | on; judged with undeserved() directly            |
//
// The resource is available while fewer than `capacity` units are held. Availability
// intervals are maximal: [the moment the held count fell below capacity, the moment
// it reached capacity again) (open while it has not).
//
// The rule. A wait that returned "timed out" has the window [call, min(deadline,
// return)] (what it could have seen: a return before its deadline is early_fire's
// business, not this oracle's). It is one undeserved_timeout if the window overlaps
// ONE continuous availability interval by at least `grace`; the sentence names the
// waiter, the interval, the overlap and the grace. One violation per wait (the
// longest overlap is named).
//
// The same rule judges a wait that succeeded: if its window [call, return] overlaps
// one continuous availability interval by at least `grace`, it waited while what it
// waited for was there, and whatever finally woke it (a later hand-off, its own
// timer, which then found the count at zero) hid a wake-up that was lost. That is a
// lost_wakeup, not an undeserved_timeout (the call did not fail): under dense
// contention a lost hand-off ends this way, not in a timeout.
//
// The grace covers wake latency: the driver records a hand-off recipient's
// acquisition only when the recipient runs, and a freed unit is counted available
// until then; a waiter's timeout may also race the release that frees its unit.
// Each driver states its grace where it builds the ledger (runner/sync_cases.h,
// kUndeservedGraceSimNs for simulation, and lost_wakeup_grace_ns on real threads).
//
// Cost: begin() and end() of a wait, held() and released() are one lock each plus
// O(log waits in flight); a timed-out wait is judged in O(intervals kept). Memory:
// closed intervals are kept only while a wait in flight began before their end, so
// O(availability changes during the longest wait in flight), never O(operations).
//
// Ground rules: every method takes mu_, so any thread may call any of them; the
// clock (`now`) and the formatter run under mu_ and must be plain code (under
// simulation: no scheduling point, so a std::mutex is never held across one); the
// sink runs after mu_ is released. Times come from `now` only, read under mu_, so
// the order of the ledger's events is the order of its clock readings.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tlab/base/annotations.h"
#include "tlab/platform/std_mutex.h"
#include "types/oracle.h"

namespace tlab::tool {

// Availability: one continuous interval [from, to) during which the resource was
// available; to == kOpen while it still is.
struct Availability {
  static constexpr std::int64_t kOpen = INT64_MAX;
  std::int64_t from = 0;
  std::int64_t to = kOpen;
};

// TimedOutWait: one wait that returned "timed out", on the ledger's clock (ns).
struct TimedOutWait {
  std::int64_t call = 0;      // when the wait began
  std::int64_t deadline = 0;  // call + its timeout
  std::int64_t returned = 0;  // when it returned "timed out"
  std::string_view who;       // the waiter ("mutex_contender#2")
  std::string_view what;      // the call ("lock_for", "wait_for", "with_timeout")
};

// AvailabilityFormat: how a sentence prints an instant of the ledger's clock
// ("t=1.234ms": CaseContext::at).
using AvailabilityFormat = std::function<std::string(std::int64_t)>;

// undeserved_overlap: how long `w`'s window [call, min(deadline, returned)] overlaps
// `a` (0 if not at all).
std::int64_t undeserved_overlap(const TimedOutWait& w, const Availability& a);

// undeserved: the undeserved_timeout sentence for `w` against `a`, or nullopt if
// their overlap is below `grace_ns`. `resource` names what was available ("the
// mutex", "a pool object", "the awaited sleep").
std::optional<std::string> undeserved(const TimedOutWait& w, const Availability& a,
                                      std::int64_t grace_ns, std::string_view resource,
                                      const AvailabilityFormat& at);
// woken_late: the lost_wakeup sentence for a wait `w` that succeeded at w.returned
// (its window [call, returned]; w.deadline is ignored) against `a`, or nullopt if
// their overlap is below `grace_ns`.
std::optional<std::string> woken_late(const TimedOutWait& w, const Availability& a,
                                      std::int64_t grace_ns, std::string_view resource,
                                      const AvailabilityFormat& at);

class AvailabilityLedger {
 public:
  struct Options {
    std::uint32_t capacity = 1;  // units; available while fewer are held
    std::int64_t grace_ns = 0;   // overlap a timed-out wait is allowed (wake latency)
    std::string resource;        // "the mutex", "a pool object", "the wait group's count at 0"
    std::string what;            // the timed call ("lock_for")
    bool wait_takes_unit = true;  // a successful wait holds one unit (false: an event)
  };
  using Clock = std::function<std::int64_t()>;
  // The finding's oracle (undeserved_timeout for a timeout, lost_wakeup for a late
  // success) and its sentence.
  using Sink = std::function<void(Oracle oracle, const std::string& sentence)>;

  // AvailabilityLedger::AvailabilityLedger: nothing held, so available from now().
  AvailabilityLedger(Options o, Clock now, AvailabilityFormat at, Sink sink);

  // Wait: a wait in flight, from begin() to end().
  struct Wait {
    std::int64_t call;
  };

  // AvailabilityLedger::begin: a timed wait is called now.
  Wait begin();
  // AvailabilityLedger::end: the wait returned now, `ok` (acquired, or woken by the
  // event) or timed out. Ensures: every wait is judged and its sentence (if any) sent
  // to the sink; ok with wait_takes_unit then holds one more unit.
  void end(const Wait& w, bool ok, std::int64_t deadline, std::string_view who);
  // AvailabilityLedger::held: n more units held now (wait group: add(n)).
  void held(std::uint32_t n = 1);
  // AvailabilityLedger::released: n units released now (after the release returned).
  void released(std::uint32_t n = 1);

  std::uint64_t judged() const;  // timed-out waits judged (successes are not counted)
  std::int64_t grace_ns() const { return o_.grace_ns; }

 private:
  bool available() const TLAB_REQUIRES(mu_);  // fewer than capacity units held
  void change(std::int64_t delta) TLAB_REQUIRES(mu_);

  const Options o_;
  const Clock now_;
  const AvailabilityFormat at_;
  const Sink sink_;
  mutable StdMutex mu_;
  std::int64_t held_ TLAB_GUARDED_BY(mu_) = 0;
  std::int64_t open_from_ TLAB_GUARDED_BY(mu_) = 0;  // valid while held_ < capacity
  std::deque<Availability> closed_ TLAB_GUARDED_BY(mu_);
  std::multiset<std::int64_t> in_flight_ TLAB_GUARDED_BY(mu_);  // call times
  std::uint64_t judged_ TLAB_GUARDED_BY(mu_) = 0;
};

}  // namespace tlab::tool
