// The ledger's periodic series (tool/oracles/timer_ledger.h, "Periodic series"):
// each run is judged as a one-shot due at its run's time, for each kind; a run in
// flight during a cancel may finish, one that begins after it may not; a second
// run while the first is in its callback is overlapping_run; a live series is
// never too late to stop.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "timer_ledger_support.h"

namespace tlab::tool {
namespace {

using namespace ledger_test;

// A ledger that judges lateness with an allowance of 100 ns.
Ledger late_ledger() { return Ledger(LedgerOrder::kOverlapping, LedgerRules::all(), 64, 100); }
void poll(Ledger& l, std::int64_t now) { l->poll_began(LedgerInstant{now, 0}); }

// arm_series: schedule_periodic() of `cookie` at `at`: first run after `delay`.
void arm_series(Ledger& l, std::uint64_t cookie, std::int64_t at, std::int64_t delay,
                std::int64_t period, std::uint32_t kind) {
  l->schedule(cookie, LedgerSchedule{.owner = "scheduler#0",
                                     .at = LedgerInstant{at, 0},
                                     .delay = delay,
                                     .period = period,
                                     .periodic = kind});
  l->armed(cookie, cookie + 100);
}
// run: a poll at `now` that fires the series, whose callback then returns.
void run(Ledger& l, std::uint64_t cookie, std::int64_t now) {
  poll(l, now);
  const LedgerFired f = l->fired(cookie, LedgerInstant{now, 0});
  EXPECT_TRUE(f.first && f.periodic);
  l->run_ended(cookie, LedgerInstant{now, 0});
}

// A fixed-rate series on its grid (0 + 1000 + k * 1000) is quiet, however late
// within the allowance each run is, and stays one open timer: runs are counted
// apart from fires.
TEST(TimerLedgerPeriodicTest, AFixedRateSeriesOnItsGridIsQuietAndOneOpenTimer) {
  Ledger l = late_ledger();
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  for (std::int64_t t : {1000, 2050, 3000, 4090}) run(l, 1, t);
  EXPECT_TRUE(l.quiet()) << l.all();
  const LedgerCounts n = l->counts();
  EXPECT_EQ(n.runs, 4u);
  EXPECT_EQ(n.fired, 0u);
  EXPECT_EQ(n.live, 1u);
  EXPECT_EQ(l->view(1)->deadline, 5000);
}

// Drift: a fixed-rate series whose next run is counted from the poll that ran the
// last one falls behind the grid, and a poll past grid + allowance that passed it
// over makes the run late; a run before its grid point is early.
TEST(TimerLedgerPeriodicTest, AFixedRateSeriesThatDriftsIsLateAndOneAheadIsEarly) {
  Ledger l = late_ledger();
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  run(l, 1, 1080);
  poll(l, 2100);  // run 1 is due at 2000: this poll must fire it
  run(l, 1, 2180);
  ASSERT_EQ(l.count(Oracle::kLateFire), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kLateFire).find("run 1 of the fixed-rate series (period "),
            std::string::npos)
      << l.first(Oracle::kLateFire);
  EXPECT_NE(l.first(Oracle::kLateFire).find("the poll at t=2100 had already passed it over"),
            std::string::npos)
      << l.first(Oracle::kLateFire);
  run(l, 1, 2900);  // run 2 is due at 3000
  ASSERT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kEarlyFire).find("(due at t=3000) fired at t=2900"), std::string::npos)
      << l.first(Oracle::kEarlyFire);
}

// Missed grid points: a fixed-rate series catches them up (a run due in the past
// is due at once, in the next poll), a skip series runs the first grid point after
// the run instead, and running a missed one is early.
TEST(TimerLedgerPeriodicTest, MissedRunsAreCaughtUpByFixedRateAndSkippedBySkip) {
  Ledger burst = late_ledger();
  arm_series(burst, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  run(burst, 1, 3500);  // runs 1 and 2 (2000, 3000) are missed
  run(burst, 1, 3600);  // run 1, caught up
  run(burst, 1, 3700);  // run 2
  run(burst, 1, 4000);  // run 3, on the grid again
  EXPECT_TRUE(burst.quiet()) << burst.all();

  Ledger skip = late_ledger();
  arm_series(skip, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE_SKIP);
  run(skip, 1, 3500);
  EXPECT_EQ(skip->view(1)->deadline, 4000);  // the first grid point after 3500
  run(skip, 1, 4000);
  EXPECT_TRUE(skip.quiet()) << skip.all();
  Ledger bursting = late_ledger();
  arm_series(bursting, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE_SKIP);
  run(bursting, 1, 3500);
  run(bursting, 1, 3600);  // a missed run, caught up as a fixed-rate series would
  EXPECT_EQ(bursting.count(Oracle::kEarlyFire), 1u) << bursting.all();
}

// A fixed-delay series keeps its gap from the run's start: a run sooner is early;
// a callback that returns late moves the lateness bound, not the early one.
TEST(TimerLedgerPeriodicTest, AFixedDelaySeriesKeepsItsGap) {
  Ledger l = late_ledger();
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_DELAY);
  run(l, 1, 1300);
  run(l, 1, 2350);  // 1300 + 1000, within the allowance
  EXPECT_TRUE(l.quiet()) << l.all();
  poll(l, 3200);
  l->fired(1, LedgerInstant{3200, 0});  // 2350 + 1000 = 3350: 150 ns early
  EXPECT_EQ(l.count(Oracle::kEarlyFire), 1u) << l.all();
  // The callback of the run at 1000 returns at 1500: the next run is due by 2500
  // (+ the allowance), not 2000.
  Ledger slow = late_ledger();
  arm_series(slow, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_DELAY);
  poll(slow, 1000);
  slow->fired(1, LedgerInstant{1000, 0});
  slow->run_ended(1, LedgerInstant{1500, 0});
  poll(slow, 2100);  // past 2000 + 100, but the gap counts from 1500 too
  run(slow, 1, 2500);
  EXPECT_TRUE(slow.quiet()) << slow.all();
}

// A series stopped by PREVENTED never begins another run: one that begins after
// the call returned is fired_after_cancel; a run that was already in flight on
// another thread may finish. A second PREVENTED is wrong.
TEST(TimerLedgerPeriodicTest, AStoppedSeriesNeverRunsAgain) {
  Ledger l;
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  run(l, 1, 1000);
  LedgerCancel c = l.begin(1, 1500);
  l.end(c, 1600, TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(l->counts().prevented, 1u);
  EXPECT_TRUE(l.quiet()) << l.all();
  l->fired(1, LedgerInstant{2000, 0});
  ASSERT_EQ(l.count(Oracle::kFiredAfterCancel), 1u) << l.all();
  LedgerCancel again = l.begin(1, 2100);
  l.end(again, 2200, TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();

  Ledger racing;
  arm_series(racing, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  LedgerCancel r = racing.begin(1, 1500);
  racing.end(r, 1600, TLAB_CANCEL_PREVENTED);
  std::thread fire([&] { racing->fired(1, LedgerInstant{1550, 0}); });  // began in the call
  fire.join();
  EXPECT_TRUE(racing.quiet()) << racing.all();
}

// TOO_LATE for a live series is wrong: only a stopped series is too late to stop.
TEST(TimerLedgerPeriodicTest, TooLateForALiveSeriesIsWrong) {
  Ledger l;
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_DELAY);
  run(l, 1, 1000);
  LedgerCancel c = l.begin(1, 1500);
  l.end(c, 1600, TLAB_CANCEL_TOO_LATE);
  l->overdue(LedgerInstant{5000, 0}, 5000, "");
  ASSERT_EQ(l.count(Oracle::kWrongResult), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kWrongResult).find("had not been stopped"), std::string::npos)
      << l.first(Oracle::kWrongResult);
}

// A series whose runs stop coming is lost at the drain, naming the run awaited.
TEST(TimerLedgerPeriodicTest, ASeriesThatStopsRunningIsLost) {
  Ledger l;
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  run(l, 1, 1000);
  run(l, 1, 2000);
  l->overdue(LedgerInstant{9000, 0}, 9000, " (drain horizon t=9000)");
  ASSERT_EQ(l.count(Oracle::kLostTimer), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kLostTimer).find("its run 2 was due at t=3000"), std::string::npos)
      << l.first(Oracle::kLostTimer);
}

// A self-driven subject's run that began late moves a fixed-delay series' next
// run: the ledger, which sees no polls, bounds it below by the run's own due time
// (for early) and above by the fire (for lost): a drain between the two does not
// call it lost; one past the upper bound does.
TEST(TimerLedgerPeriodicTest, ALateRunMovesAFixedDelaySeriesWithoutALoss) {
  Ledger l;
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_DELAY);
  l->fired(1, LedgerInstant{9000, 0});  // 8000 late; the next run is due by 10000
  l->run_ended(1, LedgerInstant{9000, 0});
  EXPECT_EQ(l->view(1)->deadline, 10000);
  l->overdue(LedgerInstant{9500, 0}, 9500, "");
  EXPECT_TRUE(l.quiet()) << l.all();
  l->overdue(LedgerInstant{10500, 0}, 10500, "");
  EXPECT_EQ(l.count(Oracle::kLostTimer), 1u) << l.all();
}

// The firing thread may tell the ledger of run 0 before the scheduling thread,
// whose schedule_periodic() has returned, tells it armed(): the series has moved
// on by then, and the late armed() must not put run 1's due time back to run 0's
// (libuv under load: run 1 judged late against run 0's due time). For every kind.
TEST(TimerLedgerPeriodicTest, AnArmedThatArrivesAfterTheFirstRunKeepsTheNextRunsDue) {
  for (const std::uint32_t kind :
       {TLAB_PERIODIC_FIXED_RATE, TLAB_PERIODIC_FIXED_RATE_SKIP, TLAB_PERIODIC_FIXED_DELAY}) {
    Ledger l = late_ledger();
    l->schedule(1, LedgerSchedule{.owner = "scheduler#0",
                                  .at = LedgerInstant{0, 0},
                                  .delay = 1000,
                                  .period = 1000,
                                  .periodic = kind});
    run(l, 1, 1000);  // run 1 is due at 2000
    l->armed(1, 101, 0);
    EXPECT_EQ(l->view(1)->deadline, 2000) << kind;
    poll(l, 1500);  // before run 1's due time: passes nothing over
    run(l, 1, 2000);
    EXPECT_TRUE(l.quiet()) << kind << ": " << l.all();
    poll(l, 3200);  // run 2 is due at 3000: this poll passes it over
    run(l, 1, 3300);
    EXPECT_EQ(l.count(Oracle::kLateFire), 1u) << kind << ": " << l.all();
  }
}

// One run at a time: a fire of the series before the last run's callback
// returned (run_ended) is overlapping_run; after it, quiet.
TEST(TimerLedgerPeriodicTest, ARunWhileThePreviousIsInItsCallbackOverlaps) {
  Ledger l;
  arm_series(l, 1, 0, 1000, 1000, TLAB_PERIODIC_FIXED_RATE);
  l->fired(1, LedgerInstant{1000, 0});
  l->fired(1, LedgerInstant{2000, 0});
  ASSERT_EQ(l.count(Oracle::kDoubleResume), 1u) << l.all();
  EXPECT_NE(l.first(Oracle::kDoubleResume).find("run 1 began at t=2000 while run 0"),
            std::string::npos)
      << l.first(Oracle::kDoubleResume);
  l->run_ended(1, LedgerInstant{2100, 0});
  l->fired(1, LedgerInstant{3000, 0});  // run 1 ended first: quiet
  EXPECT_EQ(l.count(Oracle::kDoubleResume), 1u) << l.all();
  l->fired(1, LedgerInstant{4000, 0});  // run 2 has not ended
  EXPECT_EQ(l.count(Oracle::kDoubleResume), 2u) << l.all();
}

}  // namespace
}  // namespace tlab::tool
