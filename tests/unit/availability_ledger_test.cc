// Tests of the undeserved_timeout judge (tool/oracles/availability_ledger.h) on a
// manual clock: availability intervals against timed-out waits' windows, the grace
// boundary, capacity above one, the pruning of old intervals, and a success that
// came late (a lost wakeup that a later wake-up hid). Each test names
// the mutation of the judge it catches (each was tried once: the test failed).
#include "oracles/availability_ledger.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tlab::tool {
namespace {

// A ledger on a clock the test moves by hand; findings collected in `found`.
struct Fixture {
  explicit Fixture(std::uint32_t capacity, std::int64_t grace, bool takes_unit = true)
      : ledger({capacity, grace, "the mutex", "lock_for", takes_unit}, [this] { return now; },
               [](std::int64_t t) { return "t=" + std::to_string(t); },
               [this](Oracle o, const std::string& s) {
                 found.push_back(s);
                 oracles.push_back(o);
               }) {}

  // A wait begun at `call`; it ends at `back` with `deadline`, timed out (or not).
  AvailabilityLedger::Wait begin_at(std::int64_t call) {
    now = call;
    return ledger.begin();
  }
  void end_at(const AvailabilityLedger::Wait& w, std::int64_t deadline, std::int64_t back,
              bool ok = false) {
    now = back;
    ledger.end(w, ok, deadline, "mutex_contender#1");
  }
  void wait(std::int64_t call, std::int64_t deadline, std::int64_t back, bool ok = false) {
    end_at(begin_at(call), deadline, back, ok);
  }
  void hold_at(std::int64_t t, std::uint32_t n = 1) {
    now = t;
    ledger.held(n);
  }
  void release_at(std::int64_t t, std::uint32_t n = 1) {
    now = t;
    ledger.released(n);
  }

  std::int64_t now = 0;  // declared before the ledger: its constructor reads it
  std::vector<std::string> found;
  std::vector<Oracle> oracles;  // found[i]'s oracle
  AvailabilityLedger ledger;
};

// A timeout while the mutex was free (nobody ever held it) is undeserved, and the
// sentence names the waiter, the interval, the overlap and the grace.
// Catches: a judge that ignores the open (current) interval.
TEST(AvailabilityLedgerTest, TimeoutWhileFreeIsUndeserved) {
  Fixture f(1, 100);
  f.wait(1000, 2000, 2000);
  ASSERT_EQ(f.found.size(), 1u);
  const std::string& s = f.found[0];
  EXPECT_NE(s.find("mutex_contender#1: lock_for called at t=1000 timed out at t=2000"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("the mutex was available from t=0 on"), std::string::npos) << s;
  EXPECT_NE(s.find("1.0us of its wait, at least the grace of 100ns"), std::string::npos) << s;
  EXPECT_EQ(f.oracles[0], Oracle::kUndeservedTimeout);
  EXPECT_EQ(f.ledger.judged(), 1u);
}

// A timeout while the mutex was held for the whole window is deserved; so is any
// wait that returned true.
// Catches: a judge that counts held time as available (held_ < capacity inverted).
TEST(AvailabilityLedgerTest, TimeoutWhileHeldIsDeserved) {
  Fixture f(1, 100);
  f.hold_at(500);
  f.wait(1000, 2000, 2000);
  f.wait(2000, 3000, 2500, /*ok=*/true);  // a second holder: the ledger does not judge it
  EXPECT_TRUE(f.found.empty()) << f.found[0];
}

// The grace boundary: an overlap of exactly the grace is a finding, one ns less is
// not. Catches: `overlap <= grace` (a strict bound) and `overlap < grace` flipped.
TEST(AvailabilityLedgerTest, OverlapOfExactlyTheGraceIsAFinding) {
  Fixture f(1, 100);
  f.hold_at(0);
  f.release_at(1900);  // free from 1900 on: overlap with [1000, 2000] is 100
  f.wait(1000, 2000, 2000);
  EXPECT_EQ(f.found.size(), 1u);
  Fixture g(1, 100);
  g.hold_at(0);
  g.release_at(1901);  // overlap 99
  g.wait(1000, 2000, 2000);
  EXPECT_TRUE(g.found.empty()) << g.found[0];
}

// Two short availability intervals whose overlaps sum past the grace, neither of
// which reaches it alone, are wake latency twice, not one undeserved timeout.
// Catches: a judge that sums overlaps across intervals.
TEST(AvailabilityLedgerTest, OnlyOneContinuousIntervalCounts) {
  Fixture f(1, 100);
  f.hold_at(0);
  const AvailabilityLedger::Wait w = f.begin_at(1000);
  f.release_at(1100);
  f.hold_at(1170);  // free 70 ns
  f.release_at(1500);
  f.hold_at(1570);  // free 70 ns again
  f.end_at(w, 2000, 2000);
  EXPECT_TRUE(f.found.empty()) << f.found[0];
}

// The window is [call, min(deadline, return)]: availability after the deadline, or
// after an early return, is not the wait's to see.
// Catches: a window that ends at the return only, or at the deadline only.
TEST(AvailabilityLedgerTest, WindowEndsAtTheDeadlineOrAnEarlierReturn) {
  Fixture late(1, 100);
  late.hold_at(0);
  late.release_at(2000);      // free exactly at the deadline
  late.wait(1000, 2000, 2500);  // returned 500 ns late: still deserved
  EXPECT_TRUE(late.found.empty()) << late.found[0];
  Fixture early(1, 100);
  early.hold_at(0);
  early.release_at(1600);
  early.wait(1000, 3000, 1650);  // gave up at 1650 (early_fire's business): 50 ns
  EXPECT_TRUE(early.found.empty()) << early.found[0];
}

// With capacity 2 the resource is available while fewer than 2 units are held: a
// timeout with one holder is undeserved, with two it is deserved; a successful wait
// holds a unit. Catches: availability as "nothing held" (held == 0) instead of
// held < capacity, and a successful wait that does not take its unit.
TEST(AvailabilityLedgerTest, CapacityAboveOneCountsHolders) {
  Fixture f(2, 100);
  f.wait(0, 100, 10, /*ok=*/true);  // holder 1 (by a wait)
  f.wait(1000, 2000, 2000);         // 1 of 2 held: undeserved
  EXPECT_EQ(f.found.size(), 1u);
  f.hold_at(2100);            // holder 2
  f.wait(3000, 4000, 4000);  // 2 of 2 held: deserved
  EXPECT_EQ(f.found.size(), 1u);
  f.release_at(4100);
  f.wait(5000, 6000, 6000);  // 1 of 2 again: undeserved
  EXPECT_EQ(f.found.size(), 2u);
}

// An event (a wait group's zero): a true return takes nothing; add(n) makes it
// unavailable until all n are released. Catches: wait_takes_unit ignored.
TEST(AvailabilityLedgerTest, AnEventIsNotTakenByItsWaiters) {
  Fixture f(1, 100, /*takes_unit=*/false);
  f.hold_at(0, 3);  // add(3)
  f.release_at(100);
  f.release_at(200);
  f.wait(300, 900, 900);  // one done() outstanding: deserved
  EXPECT_TRUE(f.found.empty());
  f.release_at(1000);                 // all done
  f.wait(1100, 1200, 1150, /*ok=*/true);  // woken; takes nothing
  f.wait(1300, 2300, 2300);           // the count is still 0: undeserved
  EXPECT_EQ(f.found.size(), 1u);
}

// An interval that closed while a long wait was in flight is kept for it, even
// after other waits ended; intervals no wait in flight can see are dropped.
// Catches: pruning by the interval's start, or pruning at every end().
TEST(AvailabilityLedgerTest, ClosedIntervalsAreKeptForLongWaits) {
  Fixture f(1, 100);
  f.hold_at(0);
  const AvailabilityLedger::Wait longw = f.begin_at(1000);
  f.release_at(1100);
  f.hold_at(1500);           // free 400 ns, closed
  f.wait(1600, 1700, 1700);  // a short wait ends meanwhile: deserved
  EXPECT_TRUE(f.found.empty());
  f.end_at(longw, 5000, 5000);
  ASSERT_EQ(f.found.size(), 1u);
  EXPECT_NE(f.found[0].find("from t=1100 to t=1500"), std::string::npos) << f.found[0];
}

// A wait that succeeded only long after what it waited for became available was
// not woken by the release: a lost_wakeup (its window is [call, return]). A prompt
// success after a release is not. Catches: a judge that skips successful waits.
TEST(AvailabilityLedgerTest, ALateSuccessIsALostWakeup) {
  Fixture f(1, 100);
  f.hold_at(0);
  const AvailabilityLedger::Wait prompt = f.begin_at(500);
  f.release_at(600);
  f.end_at(prompt, 5000, 650, /*ok=*/true);  // 50 ns after the release: within the grace
  EXPECT_TRUE(f.found.empty());
  const AvailabilityLedger::Wait late = f.begin_at(1000);
  f.release_at(1200);                      // nobody wakes the queued waiter
  f.end_at(late, 1500, 2000, /*ok=*/true);  // its timer (or a later hand-off) does
  ASSERT_EQ(f.found.size(), 1u);
  EXPECT_EQ(f.oracles[0], Oracle::kLostWakeup);
  EXPECT_NE(f.found[0].find("lock_for called at t=1000 succeeded only at t=2000, yet the mutex "
                            "was available from t=1200 on: 800ns of its wait"),
            std::string::npos)
      << f.found[0];
  EXPECT_EQ(f.ledger.judged(), 0u);  // judged() counts timeouts only
}

// undeserved() on one interval, as the coroutine engine uses it: the awaited
// event due (set) at 500, the timeout at 1000 won: undeserved; due at 950: within
// the grace. Catches: undeserved() ignoring the grace.
TEST(AvailabilityLedgerTest, OneIntervalJudgedDirectly) {
  const AvailabilityFormat at = [](std::int64_t t) { return std::to_string(t); };
  const TimedOutWait w{0, 1000, 1010, "coroutine_task#0", "with_timeout"};
  EXPECT_TRUE(undeserved(w, {500, Availability::kOpen}, 100, "the awaited sleep", at));
  EXPECT_FALSE(undeserved(w, {950, Availability::kOpen}, 100, "the awaited sleep", at));
  EXPECT_EQ(undeserved_overlap(w, {500, 700}), 200);
  EXPECT_EQ(undeserved_overlap(w, {1000, Availability::kOpen}), 0);
}

}  // namespace
}  // namespace tlab::tool
