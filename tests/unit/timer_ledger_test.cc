// Tests of the per-timer ledger (tool/oracles/timer_ledger.h): each rule fires on
// a minimal sequence of events and stays quiet on the correct one; the order rules
// (steps: one call ordered before another only when it returned before the other
// began) hold in both directions of recording; the filter, the sequential order
// and the queries the drivers steer by do what the header's tables say.
#include "oracles/timer_ledger.h"

#include <gtest/gtest.h>

#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "timer_ledger_support.h"

namespace tlab::tool {
namespace {

using namespace ledger_test;

// ---- fires ----

// A timer fired at its deadline is quiet, counted, and its lateness sampled.
TEST(TimerLedgerTest, FireAtTheDeadlineIsQuiet) {
  Ledger l;
  l.arm(1, 1000, 500);
  l.fire(1, 1500);
  EXPECT_TRUE(l.quiet()) << l.all();
  EXPECT_EQ(l.lateness, std::vector<std::int64_t>{0});
  const LedgerCounts n = l->counts();
  EXPECT_EQ(n.armed, 1u);
  EXPECT_EQ(n.fired, 1u);
  EXPECT_EQ(n.live, 0u);
}

// A fire one nanosecond before the deadline is early_fire, naming the call and the gap.
TEST(TimerLedgerTest, FireBeforeTheDeadlineIsEarly) {
  Ledger l;
  l.arm(1, 1000, 500);
  l.fire(1, 1499);
  ASSERT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kEarlyFire),
            "cookie 1 of scheduler#0: schedule(now, delay=500 ns) called at t=1000 (due at "
            "t=1500) fired at t=1499, 1ns before its deadline");
}

// A huge delay saturates at INT64_MAX: a fire at any finite time is early.
TEST(TimerLedgerTest, HugeDelaySaturatesAndNeverFiresOnTime) {
  Ledger l;
  l.arm(1, 1000, INT64_MAX);
  EXPECT_EQ(l->view(1)->deadline, INT64_MAX);
  l.fire(1, INT64_MAX - 1);
  EXPECT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
}

// A second fire of one cookie is double_resume, naming both fires.
TEST(TimerLedgerTest, SecondFireIsFiredTwice) {
  Ledger l;
  l.arm(1, 0, 10);
  l.fire(1, 10);
  EXPECT_TRUE(l.quiet());
  l.fire(1, 20);
  ASSERT_EQ(l.count(Oracle::kDoubleResume), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kDoubleResume),
            "cookie 1 (handle 0x65) fired twice: first at t=10, again at t=20");
}

// A second fire whose first outcome left the ring is still double_resume.
TEST(TimerLedgerTest, SecondFireBeyondTheRingIsStillFiredTwice) {
  Ledger l(LedgerOrder::kOverlapping, LedgerRules::all(), 1);
  l.arm(1, 0, 10);
  l.arm(2, 0, 10);
  l.fire(1, 10);
  l.fire(2, 10);  // takes the ring's one slot
  l.fire(1, 20);
  ASSERT_EQ(l.count(Oracle::kDoubleResume), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kDoubleResume).find("no longer kept"), std::string::npos);
}

// A fire of a cookie no schedule() was given is double_resume.
TEST(TimerLedgerTest, FireOfACookieNeverScheduled) {
  Ledger l;
  l.arm(1, 0, 10);
  l.fire(7, 10);
  l.fire(0, 10);
  EXPECT_EQ(l.count(Oracle::kDoubleResume), 2u) << l.all();
  EXPECT_NE(l.first(Oracle::kDoubleResume).find("never passed that cookie"), std::string::npos);
}

// A fire after destroyed() is fired_after_cancel, even of a live timer.
TEST(TimerLedgerTest, FireAfterDestroyIsFiredAfterCancel) {
  Ledger l;
  l.arm(1, 0, 10);
  l->destroyed();
  l.fire(1, 10);
  ASSERT_EQ(l.count(Oracle::kFiredAfterCancel), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kFiredAfterCancel).find("after destroy() had returned"),
            std::string::npos);
}

// A fire of a cookie whose schedule() was refused is wrong_result.
TEST(TimerLedgerTest, FireOfARefusedScheduleIsWrongResult) {
  Ledger l;
  l->schedule(1, LedgerSchedule{"scheduler#0", LedgerInstant{0, 0}, -5, false, 0});
  l->refused(1, LedgerInstant{0, 0});
  EXPECT_EQ(l->counts().live, 0u);
  l.fire(1, 3);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kWrongResult).find("returned an error"), std::string::npos);
}

// ---- cancels against fires (overlapping order) ----

// PREVENTED for a timer that fired before the call began is wrong_result.
TEST(TimerLedgerTest, PreventedAfterTheFireIsWrongResult) {
  Ledger l;
  l.arm(1, 0, 10);
  l.fire(1, 10);
  LedgerCancel c = l.begin(1, 20);
  l.end(c, 30, TLAB_CANCEL_PREVENTED);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kWrongResult),
            "canceller#0's cancel(handle 0x65) of cookie 1, called at t=20 returned PREVENTED at "
            "t=30, but the timer had fired at t=10, before the call began");
}

// PREVENTED from a call overlapping the fire (the fire took a step between the
// call's begin and end) is wrong_result: PREVENTED promises it never fires.
TEST(TimerLedgerTest, PreventedOverlappingAFireIsWrongResult) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 9);
  l.fire(1, 10);
  l.end(c, 11, TLAB_CANCEL_PREVENTED);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kWrongResult).find("while the call was in flight"), std::string::npos);
  EXPECT_EQ(l.count(Oracle::kFiredAfterCancel), 0u);
}

// A fire after the PREVENTED call returned is fired_after_cancel.
TEST(TimerLedgerTest, FireAfterPreventedReturnedIsFiredAfterCancel) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 5);
  l.end(c, 6, TLAB_CANCEL_PREVENTED);
  EXPECT_TRUE(l.quiet());
  l.fire(1, 10);
  ASSERT_EQ(l.count(Oracle::kFiredAfterCancel), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kFiredAfterCancel),
            "cookie 1 fired at t=10 although canceller#0's cancel(handle 0x65) of cookie 1, "
            "called at t=5 had returned TLAB_CANCEL_PREVENTED at t=6");
}

// A fire recorded after the PREVENTED result, whose own clock reading falls within
// the call, began while the call was in flight: wrong_result, not
// fired_after_cancel (the fire waited for the ledger's lock).
TEST(TimerLedgerTest, FireThatBeganDuringThePreventedCallIsWrongResult) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 5);
  l.end(c, 15, TLAB_CANCEL_PREVENTED);
  std::thread([&] { l.fire(1, 12); }).join();  // the subject's thread, waiting for the lock
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_EQ(l.count(Oracle::kFiredAfterCancel), 0u) << l.all();
}

// A fire on the thread that made the PREVENTED call came after it returned (a
// cancel from a callback, a sibling fired later in the same poll), even at the
// same instant: fired_after_cancel.
TEST(TimerLedgerTest, AFireOnTheCancellingThreadCameAfterTheCall) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 15);
  l.end(c, 15, TLAB_CANCEL_PREVENTED);
  l.fire(1, 15);
  EXPECT_EQ(l.count(Oracle::kFiredAfterCancel), 1u) << l.all();
  EXPECT_EQ(l.count(Oracle::kWrongResult), 0u) << l.all();
}

// PREVENTED for a live timer settles it: counted, no finding, no later fire.
TEST(TimerLedgerTest, PreventedForALiveTimerIsQuiet) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 5);
  l.end(c, 6, TLAB_CANCEL_PREVENTED);
  EXPECT_TRUE(l.quiet()) << l.all();
  EXPECT_EQ(l->counts().prevented, 1u);
  EXPECT_EQ(l->overdue(LedgerInstant{100, 0}, 100, ""), 0u);
  EXPECT_TRUE(l.quiet()) << l.all();
}

// Two PREVENTED answers for one timer are wrong_result: only one cancel can prevent it.
TEST(TimerLedgerTest, TwoPreventedAreWrongResult) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel a = l.begin(1, 1, "canceller#0");
  l.end(a, 2, TLAB_CANCEL_PREVENTED);
  LedgerCancel b = l.begin(1, 3, "canceller#1");
  l.end(b, 4, TLAB_CANCEL_PREVENTED);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kWrongResult).find("only one cancel can prevent a timer"),
            std::string::npos);
}

// Overlapping TOO_LATE and PREVENTED calls of one timer may be linearised either
// way: no finding, whichever result is recorded first.
TEST(TimerLedgerTest, OverlappingCancelsMayLineariseEitherWay) {
  for (const bool too_late_first : {true, false}) {
    SCOPED_TRACE(too_late_first);
    Ledger l;
    l.arm(1, 0, 10);
    LedgerCancel a = l.begin(1, 1, "canceller#0");
    LedgerCancel b = l.begin(1, 2, "canceller#1");
    if (too_late_first) {
      l.end(a, 3, TLAB_CANCEL_TOO_LATE);
      l.end(b, 4, TLAB_CANCEL_PREVENTED);
    } else {
      l.end(b, 3, TLAB_CANCEL_PREVENTED);
      l.end(a, 4, TLAB_CANCEL_TOO_LATE);
    }
    l->overdue(LedgerInstant{100, 0}, 100, "");
    EXPECT_TRUE(l.quiet()) << l.all();
  }
}

// TOO_LATE from a call that returned before a PREVENTED call began is
// wrong_result, whether the TOO_LATE or the PREVENTED result is recorded first.
TEST(TimerLedgerTest, TooLateBeforePreventedIsWrongResultInEitherRecordingOrder) {
  {
    Ledger l;
    l.arm(1, 0, 10);
    LedgerCancel a = l.begin(1, 1, "canceller#0");
    l.end(a, 2, TLAB_CANCEL_TOO_LATE);
    LedgerCancel b = l.begin(1, 3, "canceller#1");
    l.end(b, 4, TLAB_CANCEL_PREVENTED);
    ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
    EXPECT_NE(l.first(Oracle::kWrongResult).find("had returned TOO_LATE at t=2, before this call"),
              std::string::npos);
  }
  {
    // The TOO_LATE call ends (its step) before the PREVENTED call begins, but its
    // thread records the result only after the PREVENTED one.
    Ledger l;
    l.arm(1, 0, 10);
    LedgerCancel a = l.begin(1, 1, "canceller#0");
    a.end = LedgerInstant{2, l->step()};
    LedgerCancel b = l.begin(1, 3, "canceller#1");
    l.end(b, 4, TLAB_CANCEL_PREVENTED);
    l->cancelled(a, TLAB_CANCEL_TOO_LATE);
    ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
    EXPECT_NE(l.first(Oracle::kWrongResult).find("returned TOO_LATE at t=2, before canceller#1"),
              std::string::npos);
  }
}

// TOO_LATE for a timer that never fires is wrong_result at the end; one that then
// fires is quiet.
TEST(TimerLedgerTest, TooLateForATimerThatNeverFiresIsWrongAtTheEnd) {
  Ledger l;
  l.arm(1, 0, 10);
  l.arm(2, 0, 10);
  for (const std::uint64_t cookie : {1, 2}) {
    LedgerCancel c = l.begin(cookie, 5);
    l.end(c, 6, TLAB_CANCEL_TOO_LATE);
  }
  EXPECT_EQ(l->outstanding(), 0u);  // the subject no longer holds them
  l.fire(2, 10);
  l->overdue(LedgerInstant{100, 0}, 100, "");
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kWrongResult),
            "canceller#0's cancel(handle 0x65) of cookie 1 returned TOO_LATE at t=6, but the "
            "timer (due t=10) had not fired by t=100");
  EXPECT_EQ(l.count(Oracle::kLostTimer), 0u);
}

// UNKNOWN makes no claim: its timer may fire or not, and is neither lost nor wrong.
TEST(TimerLedgerTest, UnknownMakesNoClaim) {
  Ledger l;
  l.arm(1, 0, 10);
  LedgerCancel c = l.begin(1, 5);
  l.end(c, 6, TLAB_CANCEL_UNKNOWN);
  l->overdue(LedgerInstant{100, 0}, 100, "");
  EXPECT_TRUE(l.quiet()) << l.all();
}

// ---- delivery ----

// A live timer due by the horizon is lost_timer; one due after it, and one the
// excuse covers (counted instead), are not.
TEST(TimerLedgerTest, TimerDueByTheHorizonIsLost) {
  Ledger l;
  l.arm(1, 0, 10);
  l.arm(2, 0, 10);
  l.arm(3, 0, 1000);
  const std::uint64_t excused = l->overdue(LedgerInstant{200, 0}, 100, " (drain horizon t=100)",
                                           [](std::uint64_t cookie) { return cookie == 2; });
  EXPECT_EQ(excused, 1u);
  ASSERT_EQ(l.count(Oracle::kLostTimer), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kLostTimer),
            "cookie 1 of scheduler#0: schedule(now, delay=10 ns) at t=0 returned handle 0x65, "
            "due at t=10; neither fired nor prevented by t=200 (drain horizon t=100)");
}

// lost() judges one timer (an idle probe): lost while live, quiet once it fired.
TEST(TimerLedgerTest, OneTimerStillLiveIsLost) {
  Ledger l;
  l.arm(1, 0, 10);
  EXPECT_TRUE(l->lost(1, LedgerInstant{50, 0}, "idle probe 1/4: ", " (it must wake)"));
  ASSERT_EQ(l.count(Oracle::kLostTimer), 1u);
  EXPECT_EQ(l.first(Oracle::kLostTimer).rfind("idle probe 1/4: cookie 1", 0), 0u);
  l.fire(1, 60);
  EXPECT_FALSE(l->lost(1, LedgerInstant{70, 0}, "", ""));
  EXPECT_EQ(l.count(Oracle::kLostTimer), 1u);
}

// ---- FIFO ties ----

// Equal deadlines from one owner: the later tie firing first is fifo_order (judged
// at the earlier one's fire); in order, or from two owners, it is quiet.
TEST(TimerLedgerTest, LaterTieFiredFirstIsFifoOrder) {
  const LedgerRules rules = LedgerRules::all().without(LedgerRule::kFifoEarlierArmed);
  Ledger l(LedgerOrder::kOverlapping, rules);
  l.arm(1, 0, 10, true);
  l.arm(2, 0, 10, true);
  l.arm(3, 0, 10, true, "scheduler#1");
  l.fire(3, 10);
  l.fire(2, 10);
  EXPECT_TRUE(l.quiet()) << l.all();
  l.fire(1, 10);
  ASSERT_EQ(l.count(Oracle::kFifoOrder), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kFifoOrder),
            "scheduler#0: cookies 1 and 2 share the deadline t=10 and were scheduled in that "
            "order, but cookie 2 fired first (cookie 1 at t=10)");

  Ledger ok(LedgerOrder::kOverlapping, rules);
  ok.arm(1, 0, 10, true);
  ok.arm(2, 0, 10, true);
  ok.fire(1, 10);
  ok.fire(2, 10);
  EXPECT_TRUE(ok.quiet()) << ok.all();
}

// Sequential order: a tie fired while an earlier one is armed is fifo_order at
// once; an earlier tie a cancel made doubtful is not owed first.
TEST(TimerLedgerTest, TieFiredBeforeAnArmedEarlierOneIsFifoOrderWhenSequential) {
  const LedgerRules rules = LedgerRules::all().without(LedgerRule::kFifoLaterFirst);
  Ledger l(LedgerOrder::kSequential, rules);
  l.arm(1, 0, 10, true);
  l.arm(2, 0, 10, true);
  l.fire(2, 10, 3);
  ASSERT_EQ(l.count(Oracle::kFifoOrder), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kFifoOrder),
            "cookie 1 has the same deadline, was scheduled first and has not fired");

  Ledger doubtful(LedgerOrder::kSequential, rules);
  doubtful.arm(1, 0, 10, true);
  doubtful.arm(2, 0, 10, true);
  doubtful.cancel(1, 0, 3, TLAB_CANCEL_UNKNOWN);
  doubtful.fire(2, 10, 4);
  EXPECT_TRUE(doubtful.quiet()) << doubtful.all();
}

// ---- sequential order ----

// Sequential order: TOO_LATE for an unfired timer is wrong_result at once, and the
// timer is doubtful after it (it may fire, and pending() may leave it out).
TEST(TimerLedgerTest, SequentialTooLateForAnUnfiredTimerIsWrongAtOnce) {
  Ledger l(LedgerOrder::kSequential);
  l.arm(1, 0, 10);
  l.cancel(1, 0, 2, TLAB_CANCEL_TOO_LATE);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kWrongResult),
            "cancel(handle 0x65) of cookie 1 returned TOO_LATE at t=0, but the timer (due t=10) "
            "had not fired by t=0");
  const LedgerWindow w = l->pending_window();
  EXPECT_EQ(w.doubtful, 1u);
  l->pending_count(0, w, "", LedgerInstant{0, 3});
  l->overdue(LedgerInstant{100, 4}, 100, "");
  EXPECT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_EQ(l.count(Oracle::kConservation), 0u) << l.all();
}

// Sequential order: a fire of a prevented timer is fired_after_cancel, is judged as
// a fire too (here early), and counts as its fire (a second one is double_resume).
TEST(TimerLedgerTest, SequentialFireOfAPreventedTimerIsStillAFire) {
  Ledger l(LedgerOrder::kSequential);
  l.arm(1, 0, 10);
  l.cancel(1, 0, 2, TLAB_CANCEL_PREVENTED);
  l.fire(1, 5, 3);
  EXPECT_EQ(l.count(Oracle::kFiredAfterCancel), 1u) << l.all();
  EXPECT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
  l.fire(1, 20, 4);
  EXPECT_EQ(l.count(Oracle::kDoubleResume), 1u) << l.all();
  EXPECT_EQ(l->counts().fired, 0u);  // it was counted once, as prevented
}

// ---- pending() ----

// pending() must lie between the open timers less the doubtful and the open timers
// before the call; a gap is reported once while it stays the same.
TEST(TimerLedgerTest, PendingCountOutsideTheWindowIsConservation) {
  Ledger l;
  l.arm(1, 0, 10);
  l.arm(2, 0, 10);
  LedgerCancel c = l.begin(2, 1);
  l.end(c, 2, TLAB_CANCEL_UNKNOWN);
  LedgerWindow w = l->pending_window();
  EXPECT_EQ(w.open, 2u);
  l->pending_count(2, w, "after a step", LedgerInstant{3, 0});
  l->pending_count(1, w, "after a step", LedgerInstant{3, 0});  // the UNKNOWN one is gone
  EXPECT_TRUE(l.quiet()) << l.all();
  l->pending_count(3, w, "after a step", LedgerInstant{3, 0});
  l->pending_count(3, w, "after a step", LedgerInstant{4, 0});
  ASSERT_EQ(l.count(Oracle::kConservation), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kConservation),
            "pending() returned 3 after a step (at t=3), but scheduled 2 - fired 0 - prevented 0 "
            "= 2 (1 with an UNKNOWN cancel)");
}

// A fire during the pending() call makes either count consistent.
TEST(TimerLedgerTest, FireDuringPendingIsConsistentEitherWay) {
  Ledger l;
  l.arm(1, 0, 10);
  const LedgerWindow w = l->pending_window();
  l.fire(1, 10);
  l->pending_count(1, w, "", LedgerInstant{10, 0});
  l->pending_count(0, w, "", LedgerInstant{10, 0});
  EXPECT_TRUE(l.quiet()) << l.all();
}

// A subject's pending list naming a settled timer, or omitting a live one, is
// conservation; one omitting a timer whose cancel said UNKNOWN is not.
TEST(TimerLedgerTest, PendingListMustNameExactlyTheLiveTimers) {
  Ledger l;
  l.arm(1, 0, 10);
  l.arm(2, 0, 10);
  l.arm(3, 0, 10);
  l.fire(1, 10);
  LedgerCancel c = l.begin(3, 1);
  l.end(c, 2, TLAB_CANCEL_UNKNOWN);
  l->pending_list({2}, "line 9: ");
  EXPECT_TRUE(l.quiet()) << l.all();
  l->pending_list({1}, "line 9: ");
  ASSERT_EQ(l.count(Oracle::kConservation), 2u) << l.all();
  EXPECT_EQ(l.first(Oracle::kConservation),
            "line 9: the pending list names cookie 1, which is not armed (it fired, was "
            "prevented, was refused, or was never scheduled)");
}

// ---- the filter ----

// A ledger judges only its rules: the exec session's (early, pending_list) say
// nothing of a double fire, which the driver's ledger reports.
TEST(TimerLedgerTest, OnlyTheRulesOfTheFilterAreJudged) {
  const LedgerRules exec =
      LedgerRules::none().with(LedgerRule::kEarly).with(LedgerRule::kPendingList);
  Ledger l(LedgerOrder::kOverlapping, exec, 0);
  l.arm(1, 0, 10);
  l.fire(1, 10);
  l.fire(1, 20);
  l.fire(9, 20);
  EXPECT_TRUE(l.quiet()) << l.all();
  l.arm(2, 0, 10);
  l.fire(2, 5);
  EXPECT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
}

// ---- stale cancels ----

// PREVENTED from a stale cancel (of a settled timer's handle) is wrong_result, with
// the caller's reason and the live timer the handle's value now names.
TEST(TimerLedgerTest, StaleCancelNamesTheTimerHoldingTheHandle) {
  Ledger l;
  l->schedule(1, LedgerSchedule{"scheduler#0", LedgerInstant{0, 0}, 10, false, 0});
  l->armed(1, 7);
  l.fire(1, 10);
  l->schedule(2, LedgerSchedule{"scheduler#0", LedgerInstant{11, 0}, 10, false, 0});
  l->armed(2, 7);  // the slot reused
  std::mt19937_64 rng(1);
  ASSERT_EQ(l->pick_settled(rng), (std::pair<std::uint64_t, std::uint64_t>{1, 7}));
  LedgerCancel c = l.begin(1, 12);
  c.handle = 7;
  c.why = "; a stale cancel";
  l.end(c, 13, TLAB_CANCEL_PREVENTED);
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kWrongResult)
                .find("; a stale cancel; the handle's value now names live cookie 2 of "
                      "scheduler#0 (scheduled at t=11), which must still fire"),
            std::string::npos)
      << l.all();
}

// ---- queries ----

// The queries the drivers steer by: live picks, what is outstanding (TOO_LATE and
// UNKNOWN ones are not), what is due, and the timers in cookie order.
TEST(TimerLedgerTest, QueriesSeeTheLiveTimers) {
  Ledger l;
  l.arm(3, 0, 30);
  l.arm(1, 0, 10);
  l.arm(2, 0, 20);
  LedgerCancel c = l.begin(2, 1);
  l.end(c, 2, TLAB_CANCEL_TOO_LATE);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(l->is_live(l->pick_live(rng)));
  EXPECT_EQ(l->outstanding(), 2u);
  EXPECT_EQ(l->outstanding([](std::int64_t deadline) { return deadline <= 10; }), 1u);
  EXPECT_TRUE(l->any_due_by(10));
  EXPECT_FALSE(l->any_due_by(9));
  EXPECT_EQ(l->latest_deadline(0), 30);
  EXPECT_EQ(l->due_by(30, 3), 1u);
  std::vector<std::uint64_t> armed;
  for (const LedgerView& v : l->timers(LedgerWhich::kArmed)) armed.push_back(v.cookie);
  EXPECT_EQ(armed, (std::vector<std::uint64_t>{1, 3}));
  l.fire(1, 10);
  std::vector<std::uint64_t> accepted;
  for (const LedgerView& v : l->timers(LedgerWhich::kAccepted)) accepted.push_back(v.cookie);
  EXPECT_EQ(accepted, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_TRUE(l->accepted(1));
  EXPECT_FALSE(l->accepted(4));
  EXPECT_FALSE(l->view(1).has_value());
}

// A ledger without a format or a sink is a caller's error.
TEST(TimerLedgerTest, RequiresAFormatAndASink) {
  TimerLedger::Options o;
  EXPECT_THROW(TimerLedger{o}, std::invalid_argument);
}

// A firing thread and a cancelling thread racing over a subject that settles each
// timer once (a mutex decides who wins, the ledger hears of it afterwards, in
// either order): no finding, and every timer ends as fired or as prevented.
TEST(TimerLedgerTest, RacingFiresAndCancelsOfACorrectSubjectAreQuiet) {
  Ledger l;
  constexpr std::uint64_t kTimers = 2000;
  for (std::uint64_t i = 1; i <= kTimers; ++i) l.arm(i, 0, 0);
  std::mutex subject;
  std::vector<bool> settled(kTimers + 1, false);  // guarded by `subject`
  std::thread firer([&] {
    for (std::uint64_t i = 1; i <= kTimers; ++i) {
      bool fire = false;
      {
        std::lock_guard lk(subject);
        fire = !settled[i];
        settled[i] = true;
      }
      if (fire) l->fired(i, LedgerInstant{1, 0});
    }
  });
  std::thread canceller([&] {
    for (std::uint64_t i = kTimers; i >= 1; --i) {
      LedgerCancel c;
      c.cookie = i;
      c.handle = i + 100;
      c.begin = LedgerInstant{0, l->step()};
      bool prevented = false;
      {
        std::lock_guard lk(subject);
        prevented = !settled[i];
        settled[i] = true;
      }
      c.end = LedgerInstant{2, l->step()};
      l->cancelled(c, prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE);
    }
  });
  firer.join();
  canceller.join();
  const LedgerCounts n = l->counts();
  EXPECT_EQ(n.fired + n.prevented, kTimers);
  EXPECT_EQ(n.live, 0u);
  l->overdue(LedgerInstant{10, 0}, 10, "");
  EXPECT_TRUE(l.quiet()) << l.all();
}

}  // namespace
}  // namespace tlab::tool
